#include "bert/tokens/title_tokenizer.h"

#include <nlohmann/json.hpp>

#include "newscls/core/atomic_file.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

constexpr const char* kCharPayload = "vocab.bin";
constexpr const char* kWordpieceVocab = "wordpiece_vocab.txt";
constexpr const char* kWordpieceConfig = "wordpiece_config.json";

// The options in tokenizer_config.json's own keys, so read_tokenizer_config reads them back.
nlohmann::json options_json(const hf::BertTokenizerOptions& o) {
  nlohmann::json j;
  j["do_lower_case"] = o.do_lower_case;
  j["strip_accents"] = o.strip_accents ? nlohmann::json(*o.strip_accents) : nlohmann::json(nullptr);
  j["tokenize_chinese_chars"] = o.tokenize_chinese_chars;
  j["unk_token"] = o.unk_token;
  j["sep_token"] = o.sep_token;
  j["pad_token"] = o.pad_token;
  j["cls_token"] = o.cls_token;
  j["mask_token"] = o.mask_token;
  nlohmann::json added = nlohmann::json::object();
  for (const auto& [id, content] : o.added_special_tokens) {
    added[std::to_string(id)] = {{"content", content}, {"special", true}};
  }
  j["added_tokens_decoder"] = added;
  return j;
}

}  // namespace

TitleTokenizer TitleTokenizer::load(const Bundle& bundle, const std::string& kind) {
  if (kind == "wordpiece") {
    const std::string config = bundle.payload_path(kWordpieceConfig);
    return TitleTokenizer(
        hf::BertTokenizer::load(bundle.payload_path(kWordpieceVocab), hf::read_tokenizer_config(config)));
  }
  return TitleTokenizer(CharVocab::load(bundle.payload_path(kCharPayload)));
}

void TitleTokenizer::save(BundleWriter& bundle, std::int64_t rows) const {
  if (chars_) {
    chars_->save(bundle.payload_path(kCharPayload));
    return;
  }
  std::vector<std::int64_t> all(static_cast<std::size_t>(wordpiece_->size()));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int64_t>(i);
  std::string text;
  for (const std::string& line : wordpiece_->tokens_of(all)) text += line + "\n";
  for (std::int64_t i = wordpiece_->size(); i < rows; ++i) text += "\n";
  write_file_atomic(bundle.payload_path(kWordpieceVocab), text);
  write_json_atomic(bundle.payload_path(kWordpieceConfig), options_json(wordpiece_->options()));
}

std::vector<std::int64_t> TitleTokenizer::encode(const std::string& title, std::int64_t max_len) const {
  if (chars_) return chars_->encode(title, max_len, fold_punctuation_);
  return wordpiece_->encode(title, static_cast<std::size_t>(max_len));
}

std::vector<std::string> TitleTokenizer::tokens_of(const std::vector<std::int64_t>& ids) const {
  return chars_ ? chars_->tokens_of(ids) : wordpiece_->tokens_of(ids);
}

std::int64_t TitleTokenizer::size() const { return chars_ ? chars_->size() : wordpiece_->size(); }

TitleTokenizer TitleTokenizer::grown(const std::vector<std::string>& texts, int min_count, int max_size) const {
  if (chars_) return TitleTokenizer(chars_->grown(texts, min_count, max_size));
  return TitleTokenizer(wordpiece_->with_tokens(wordpiece_->missing_characters(texts, min_count)));
}

MaskIds TitleTokenizer::mask_ids() const {
  if (chars_) return MaskIds{};
  if (wordpiece_->mask_id() < 0) {
    throw ModelFormatError(wordpiece_->vocab_path(), "has no mask token '" + wordpiece_->options().mask_token +
                                                         "': masked-language modelling needs one");
  }
  return {wordpiece_->pad_id(), wordpiece_->cls_id(), wordpiece_->sep_id(), wordpiece_->mask_id(), 0};
}

}  // namespace newscls::bert
