// The WordPiece tokenizer gives exactly the ids transformers gave on the reference titles,
// and hand-made vocabularies pin down each rule (later duplicate wins, long words, specials).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hf/bert_text.h"
#include "hf/wordpiece.h"
#include "newscls/core/error.h"
#include "test_hf_support.h"

namespace newscls {
namespace {

using hf::BertTokenizer;

const BertTokenizer& real_tokenizer() {
  static const BertTokenizer tok = BertTokenizer::load(testing::hf_fixture("vocab.txt"));
  return tok;
}

std::string small_vocab(const std::string& extra_lines) {
  return testing::write_text(testing::scratch_dir() + "/vocab.txt",
                             "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nun\n##aff\n##able\na\n##a\nb\n" + extra_lines);
}

TEST(HfTokenizer, MatchesTransformersOnEveryReferenceTitle) {
  std::ifstream in(testing::hf_fixture("tokens.jsonl"));
  ASSERT_TRUE(in) << "missing fixture tokens.jsonl";
  std::string line;
  int titles = 0;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    const std::string text = j["text"].get<std::string>();
    const auto ids = real_tokenizer().encode(text, 64);
    ASSERT_EQ(ids, j["ids"].get<std::vector<std::int64_t>>()) << "title " << titles + 1 << ": " << text;
    ASSERT_EQ(real_tokenizer().tokens_of(ids), j["tokens"].get<std::vector<std::string>>()) << text;
    ++titles;
  }
  EXPECT_EQ(titles, 423);
}

TEST(HfTokenizer, RealVocabularyKeepsTheLaterIdOfADuplicate) {
  const BertTokenizer& tok = real_tokenizer();
  EXPECT_EQ(tok.size(), 21128);
  EXPECT_EQ(tok.pad_id(), 0);
  EXPECT_EQ(tok.unk_id(), 100);
  EXPECT_EQ(tok.cls_id(), 101);
  EXPECT_EQ(tok.sep_id(), 102);
  EXPECT_EQ(tok.mask_id(), 103);
  // "##0" is listed twice: the id is that of its last line.
  std::ifstream in(testing::hf_fixture("vocab.txt"));
  std::string line;
  std::int64_t last = -1;
  for (std::int64_t i = 0; std::getline(in, line); ++i) {
    if (line == "##0") last = i;
  }
  EXPECT_EQ(tok.id_of("##0"), last);
  EXPECT_EQ(tok.tokens_of({last}), std::vector<std::string>{"##0"});
}

TEST(HfTokenizer, DuplicateTokenLaterLineWins) {
  const BertTokenizer tok = BertTokenizer::load(small_vocab("un\n"));
  EXPECT_EQ(tok.id_of("un"), 11);
  EXPECT_EQ(tok.tokenize_ids("unaffable"), (std::vector<std::int64_t>{11, 6, 7}));
}

TEST(HfTokenizer, GreedyLongestMatchAndUnknownWords) {
  const BertTokenizer tok = BertTokenizer::load(small_vocab(""));
  EXPECT_EQ(tok.tokenize("unaffable"), (std::vector<std::string>{"un", "##aff", "##able"}));
  EXPECT_EQ(tok.tokenize("UNAFFABLE b"), (std::vector<std::string>{"un", "##aff", "##able", "b"}));
  EXPECT_EQ(tok.tokenize("unaffablex"), (std::vector<std::string>{"[UNK]"}));  // one bad piece spoils the word
  EXPECT_EQ(tok.tokenize(std::string(100, 'a')).size(), 100u);                 // a ##a ##a ...
  EXPECT_EQ(tok.tokenize(std::string(101, 'a')), (std::vector<std::string>{"[UNK]"}));
}

TEST(HfTokenizer, SpecialTokensInTheTextStayWholeAndEncodeTruncates) {
  const BertTokenizer tok = BertTokenizer::load(small_vocab(""));
  EXPECT_EQ(tok.tokenize("a[SEP]b [MASK]"), (std::vector<std::string>{"a", "[SEP]", "b", "[MASK]"}));
  EXPECT_EQ(tok.encode("a b a b", 4), (std::vector<std::int64_t>{2, 8, 10, 3}));
  EXPECT_EQ(tok.encode("", 2), (std::vector<std::int64_t>{2, 3}));
  EXPECT_THROW(tok.encode("a", 1), ConfigError);
}

TEST(HfTokenizer, GrowsByTheMissingCharactersOfNewText) {
  const BertTokenizer tok = BertTokenizer::load(small_vocab("央\n"));
  // 行 twice, 降 once, 央 known, "un" no single character: min_count 2 keeps 行 alone.
  const std::vector<std::string> texts = {"央行 un", "行降"};
  EXPECT_EQ(tok.missing_characters(texts, 2), std::vector<std::string>{"行"});
  EXPECT_EQ(tok.missing_characters(texts, 1), (std::vector<std::string>{"行", "降"}));
  const BertTokenizer grown = tok.with_tokens(tok.missing_characters(texts, 1));
  EXPECT_EQ(grown.size(), tok.size() + 2);
  EXPECT_EQ(grown.id_of("行"), tok.size());
  EXPECT_EQ(grown.tokenize("央行降"), (std::vector<std::string>{"央", "行", "降"}));
  EXPECT_EQ(tok.tokenize("央行降"), (std::vector<std::string>{"央", "[UNK]", "[UNK]"}));
  EXPECT_EQ(grown.with_tokens({"行", ""}).size(), grown.size());  // known and empty tokens are skipped
}

TEST(HfTokenizer, TextPipelineRules) {
  hf::BertTextOptions lower;
  EXPECT_EQ(hf::basic_tokenize("Héllo,World!", lower), (std::vector<std::string>{"hello", ",", "world", "!"}));
  const char dirty[] =
      "a\0b\xef\xbf\xbd"
      "c\u200bd\te";  // NUL, U+FFFD, zero-width space, tab
  EXPECT_EQ(hf::basic_tokenize(std::string(dirty, sizeof dirty - 1), lower), (std::vector<std::string>{"abcd", "e"}));
  EXPECT_EQ(hf::basic_tokenize("中文ab", lower), (std::vector<std::string>{"中", "文", "ab"}));
  // Precomposed and decomposed accents strip alike; NFD splits a Hangul syllable into its jamo.
  EXPECT_EQ(hf::basic_tokenize("\u00c9t\u00e9 E\u0301te\u0301", lower), (std::vector<std::string>{"ete", "ete"}));
  EXPECT_EQ(hf::basic_tokenize("\ud55c", lower), std::vector<std::string>{"\u1112\u1161\u11ab"});
  EXPECT_EQ(hf::basic_tokenize("\u0130", lower), std::vector<std::string>{"i"});
  hf::BertTextOptions cased;
  cased.lowercase = false;
  cased.strip_accents = false;
  EXPECT_EQ(hf::basic_tokenize("Héllo", cased), (std::vector<std::string>{"Héllo"}));
  hf::BertTextOptions lower_keep_accents;
  lower_keep_accents.strip_accents = false;
  EXPECT_EQ(hf::basic_tokenize("\u0130X", lower_keep_accents), std::vector<std::string>{"i\u0307x"});
  EXPECT_TRUE(hf::is_bert_punctuation(U'$'));        // ASCII symbol counted as punctuation
  EXPECT_TRUE(hf::is_bert_punctuation(U'\u300a'));   // 《 is Ps
  EXPECT_FALSE(hf::is_bert_punctuation(U'\u00a5'));  // ¥ is Sc, not punctuation
  EXPECT_TRUE(hf::is_bert_whitespace(U'\u3000'));
  EXPECT_TRUE(hf::is_bert_control(U'\u200b'));
  EXPECT_FALSE(hf::is_bert_control(U'\n'));
  EXPECT_TRUE(hf::is_cjk_ideograph(U'\U00020000'));
  EXPECT_FALSE(hf::is_cjk_ideograph(U'\u3042'));  // hiragana is not
}

TEST(HfTokenizer, TokenizerConfigIsReadWhenPresent) {
  const std::string dir = testing::scratch_dir();
  testing::write_text(dir + "/vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nAb\nab\n");
  EXPECT_EQ(BertTokenizer::load_dir(dir).tokenize("Ab"), std::vector<std::string>{"ab"});
  testing::write_text(dir + "/tokenizer_config.json",
                      R"({"do_lower_case": false, "model_max_length": 512, "unk_token": {"content": "[UNK]"},)"
                      R"("added_tokens_decoder": {"0": {"content": "[PAD]", "special": true}}})");
  const BertTokenizer tok = BertTokenizer::load_dir(dir);
  EXPECT_FALSE(tok.options().do_lower_case);
  EXPECT_EQ(tok.tokenize("Ab"), std::vector<std::string>{"Ab"});
}

TEST(HfTokenizer, HostileVocabAndConfigAreRefusedNamingTheFile) {
  const std::string dir = testing::scratch_dir();
  const std::string vocab = testing::write_text(dir + "/vocab.txt", "[PAD]\n[UNK]\n[CLS]\nbad\xc3\x28\n[SEP]\n");
  try {
    BertTokenizer::load(vocab);
    FAIL();
  } catch (const ModelFormatError& e) {
    EXPECT_TRUE(testing::one_line_naming(e.what(), vocab + ":4")) << e.what();
  }
  testing::write_text(vocab, "[PAD]\n[CLS]\n[SEP]\n");
  EXPECT_THROW(BertTokenizer::load(vocab), ModelFormatError);  // no [UNK]
  testing::write_text(vocab, "");
  EXPECT_THROW(BertTokenizer::load(vocab), ModelFormatError);
  const std::string config = dir + "/tokenizer_config.json";
  for (const char* bad : {R"({"do_lower_case": "yes"})", R"({"unk_token": 5})", R"({"strip_accents": 1})",
                          R"({"do_basic_tokenize": false})", R"([1])", R"({"do_lower_case": tru)",
                          R"({"added_tokens_decoder": {"7": {"content": "x", "special": false}}})"}) {
    testing::write_text(config, bad);
    try {
      hf::read_tokenizer_config(config);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const ModelFormatError& e) {
      EXPECT_TRUE(testing::one_line_naming(e.what(), config)) << e.what();
    }
  }
}

}  // namespace
}  // namespace newscls
