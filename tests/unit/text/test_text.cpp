#include <gtest/gtest.h>

#include "newscls/core/utf8.h"
#include "newscls/text/normalize.h"

namespace newscls {
namespace {

TEST(Normalize, FullWidthToHalfWidthLowercaseAndWhitespace) {
  EXPECT_EQ(normalize_title("ＮＢＡ　季后赛：火箭１２０－１１０"), "nba 季后赛:火箭120-110");
  EXPECT_EQ(normalize_title("  Hello\t\tWORLD  "), "hello world");
  EXPECT_EQ(normalize_title("冯德伦徐若\xEF\xBF\xBD隔空传情"), "冯德伦徐若\xEF\xBF\xBD隔空传情");
  EXPECT_EQ(normalize_title(""), "");
}

TEST(Normalize, DeletesInvisibleCharacters) {
  // U+001F, U+200B (zero-width space), U+FEFF (BOM), U+0085 (next line, a space; trimmed).
  EXPECT_EQ(normalize_title("\x1f股票\u200b基金\ufeff\u0085"), "股票基金");
  EXPECT_EQ(normalize_title("a \x1f b"), "a b");
  EXPECT_EQ(normalize_title("a\u0085b"), "a b");  // next line is white space, as in BERT's tokenizer
  EXPECT_EQ(normalize_title("\x7f"), "");
}

TEST(Normalize, IsIdempotent) {
  const std::string once = normalize_title("Ａｂｃ  中文　ＸＹＺ");
  EXPECT_EQ(normalize_title(once), once);
}

TEST(Normalize, FoldPunctuationMakesEveryMarkASeparator) {
  EXPECT_EQ(normalize_title("王者荣耀：新英雄？太强了！！", true), "王者荣耀 新英雄 太强了");
  EXPECT_EQ(normalize_title("「SEC」开会，讨论…", true), "sec 开会 讨论");
  EXPECT_EQ(normalize_title("《魔兽世界》 新版本", true), "魔兽世界 新版本");
  // Without folding the marks stay characters (bundles trained before the option).
  EXPECT_EQ(normalize_title("新英雄？太强了！", false), "新英雄?太强了!");
  EXPECT_EQ(normalize_title("？！", true), "");
  // Marks inside numbers and names stay.
  EXPECT_EQ(normalize_title("涨2.5%，230-290平、c&a", true), "涨2.5% 230-290平 c&a");
  const std::string once = normalize_title("Ａ，ｂ？ 中文", true);
  EXPECT_EQ(normalize_title(once, true), once);
}

TEST(Utf8, ValidatesAndSplits) {
  EXPECT_TRUE(is_valid_utf8("中文abc"));
  EXPECT_FALSE(is_valid_utf8("\xC0\x80"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));  // surrogate
  EXPECT_FALSE(is_valid_utf8("\xE4\xB8"));      // truncated
  const auto chars = split_utf8_chars("a中b");
  ASSERT_EQ(chars.size(), 3u);
  EXPECT_EQ(chars[1], "中");
  EXPECT_EQ(encode_utf8(decode_utf8("混合 text 😀")), "混合 text 😀");
}

TEST(CharNgrams, OrdersByPositionThenLengthAndDropsLoneSpaces) {
  const auto grams = char_ngrams(split_utf8_chars("股市 涨"), 1, 2);
  const std::vector<std::string> expected = {"股", "股市", "市", "市 ", " 涨", "涨"};
  EXPECT_EQ(grams, expected);
}

}  // namespace
}  // namespace newscls

#include "newscls/core/error.h"
#include "newscls/text/tokenizer.h"

namespace newscls {
namespace {

TEST(SubwordTokenizer, TrainsEncodesAndReloadsFromBytes) {
  std::vector<std::string> titles;
  for (int i = 0; i < 200; ++i) {
    titles.push_back(normalize_title("央行宣布下调存款准备金率 第" + std::to_string(i) + "次"));
    titles.push_back(normalize_title("湖人队主场击败勇士队 詹姆斯砍下三十分"));
  }
  SubwordOptions options;
  options.vocab_size = 80;
  const SubwordTokenizer sp = SubwordTokenizer::train(titles, options);
  const std::vector<std::string> pieces = sp.encode_pieces("央行宣布");
  std::string joined;
  for (const std::string& p : pieces) joined += p;
  EXPECT_EQ(joined, "央行宣布");
  const SubwordTokenizer again = SubwordTokenizer::from_serialized(sp.serialized(), "test");
  EXPECT_EQ(again.encode_ids("湖人队主场"), sp.encode_ids("湖人队主场"));
  EXPECT_EQ(SubwordTokenizer::train(titles, options).serialized(), sp.serialized());  // deterministic
  EXPECT_THROW(SubwordTokenizer::from_serialized("not a model", "x.model"), ModelFormatError);
}

}  // namespace
}  // namespace newscls
