// BERT's text pipeline before WordPiece, as transformers 5 runs it (the tokenizers library's
// BertNormalizer and BertPreTokenizer), on Unicode tables from utf8proc:
//   1. cleaning: NUL, U+FFFD and control characters (Cc, Cf, Co, except tab, CR, LF) are
//      dropped; whitespace (White_Space) becomes a space;
//   2. CJK ideographs are surrounded by spaces, so each is a word of its own;
//   3. accent stripping: NFD, then nonspacing marks (Mn) dropped;
//   4. lower-casing, character by character (full mapping);
//   5. splitting on whitespace, with every punctuation character (ASCII 33-47, 58-64, 91-96,
//      123-126, and Unicode P*) a word of its own.
//
//   BertTextOptions o;                                   // lower-case, strip accents, CJK
//   basic_tokenize("Café：ＮＢＡ总决赛", o);               // {"cafe", "：", "ｎｂａ", "总", "决", "赛"}
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace newscls::hf {

struct BertTextOptions {
  bool lowercase = true;
  bool strip_accents = true;
  bool tokenize_chinese_chars = true;
};

// Words of a UTF-8 text (invalid bytes count as U+FFFD, which cleaning drops).
std::vector<std::string> basic_tokenize(std::string_view text, const BertTextOptions& options);

// The character classes above, exposed for tests.
bool is_bert_whitespace(char32_t cp);
bool is_bert_control(char32_t cp);
bool is_bert_punctuation(char32_t cp);
bool is_cjk_ideograph(char32_t cp);

}  // namespace newscls::hf
