// BERT's WordPiece tokenizer over a Hugging Face vocab.txt, giving the ids transformers 5's
// BertTokenizer gives: special tokens written literally in the text ("[SEP]") are kept whole,
// the rest goes through basic_tokenize (bert_text.h), then greedy longest-match-first
// WordPiece with "##" continuations; a word over 100 characters, or one with a piece outside
// the vocabulary, becomes [UNK].
//
// vocab.txt holds one token per line, the line number (from 0) being its id. A token listed
// twice keeps the later line's id, as in transformers; an empty line is a token that never
// matches. A line of invalid UTF-8 is refused naming the file and line.
// tokenizer_config.json, when present, sets do_lower_case, strip_accents,
// tokenize_chinese_chars and the special tokens' spellings.
//
//   BertTokenizer tok = BertTokenizer::load_dir("bert-base-chinese");
//   std::vector<std::int64_t> ids = tok.encode("ＮＢＡ总决赛", 64);  // [CLS] ... [SEP], <= 64 ids
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hf/bert_text.h"

namespace newscls::hf {

struct BertTokenizerOptions {
  bool do_lower_case = true;
  std::optional<bool> strip_accents;  // unset: follows do_lower_case
  bool tokenize_chinese_chars = true;
  std::string unk_token = "[UNK]";
  std::string sep_token = "[SEP]";
  std::string pad_token = "[PAD]";
  std::string cls_token = "[CLS]";
  std::string mask_token = "[MASK]";
  std::size_t max_input_chars_per_word = 100;
  // tokenizer_config.json's added_tokens_decoder: (id, content) of special tokens, which
  // load() checks against vocab.txt.
  std::vector<std::pair<std::int64_t, std::string>> added_special_tokens;

  BertTextOptions text_options() const;
};

// Options from a tokenizer_config.json; keys other than the ones above are ignored, except
// that what this tokenizer cannot reproduce (do_basic_tokenize false, added tokens that are
// not vocab.txt's own special tokens) is refused naming the key.
BertTokenizerOptions read_tokenizer_config(const std::string& path);

class BertTokenizer {
 public:
  static BertTokenizer load(const std::string& vocab_path, BertTokenizerOptions options = {});
  // dir/vocab.txt, with dir/tokenizer_config.json when that exists.
  static BertTokenizer load_dir(const std::string& dir);

  // Word pieces without [CLS]/[SEP], e.g. {"ｎ", "##ｂ", "##ａ", "总"}.
  std::vector<std::string> tokenize(std::string_view text) const;
  std::vector<std::int64_t> tokenize_ids(std::string_view text) const;
  // [CLS] pieces [SEP], the pieces cut so that at most max_len ids come out (max_len >= 2).
  std::vector<std::int64_t> encode(std::string_view text, std::size_t max_len) const;
  // vocab.txt's line for each id ("" for an id past the end).
  std::vector<std::string> tokens_of(const std::vector<std::int64_t>& ids) const;

  // -1 when the token is not in the vocabulary.
  std::int64_t id_of(const std::string& token) const;
  // Growing the vocabulary for new text (continued pretraining on a reader's feed): the
  // one-character words of `texts` (as basic_tokenize splits them) that it lacks, seen at least
  // min_count times, most frequent first (ties in code point order); and this vocabulary with
  // `tokens` appended as ids size(), size() + 1, ...
  std::vector<std::string> missing_characters(const std::vector<std::string>& texts, int min_count) const;
  BertTokenizer with_tokens(const std::vector<std::string>& tokens) const;
  // Number of lines in vocab.txt: one past the largest id.
  std::int64_t size() const { return static_cast<std::int64_t>(lines_.size()); }
  std::int64_t unk_id() const { return unk_id_; }
  std::int64_t sep_id() const { return sep_id_; }
  std::int64_t pad_id() const { return pad_id_; }
  std::int64_t cls_id() const { return cls_id_; }
  std::int64_t mask_id() const { return mask_id_; }  // -1 when the vocabulary has none
  const BertTokenizerOptions& options() const { return options_; }
  const std::string& vocab_path() const { return vocab_path_; }

 private:
  void append_word_ids(const std::string& word, std::vector<std::int64_t>& out) const;
  void append_text_ids(std::string_view text, std::vector<std::int64_t>& out) const;

  std::string vocab_path_;
  BertTokenizerOptions options_;
  std::vector<std::string> lines_;
  std::unordered_map<std::string, std::int64_t> ids_;
  std::vector<std::pair<std::string, std::int64_t>> specials_;  // matched literally in the text
  std::array<bool, 256> special_starts_{};                      // first bytes of specials_
  std::int64_t unk_id_ = -1, sep_id_ = -1, pad_id_ = -1, cls_id_ = -1, mask_id_ = -1;
};

}  // namespace newscls::hf
