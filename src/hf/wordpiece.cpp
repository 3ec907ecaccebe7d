#include "hf/wordpiece.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "hf/json_fields.h"
#include "newscls/core/data.h"
#include "newscls/core/error.h"
#include "newscls/core/utf8.h"

namespace newscls::hf {
namespace {

using nlohmann::json;

std::vector<std::string> read_vocab_lines(const std::string& path) {
  TitleReader in(path);  // throws IoError naming the file when it cannot be opened or read
  std::vector<std::string> lines;
  std::string line;
  while (in.next_line(line)) {
    if (!is_valid_utf8(line)) {
      throw ModelFormatError(path + ":" + std::to_string(lines.size() + 1), "invalid UTF-8 in vocabulary token");
    }
    lines.push_back(std::move(line));
  }
  if (lines.empty()) throw ModelFormatError(path, "empty vocabulary");
  return lines;
}

// A special token is written either as a string or as a serialised AddedToken object.
std::string read_token(const json& j, const std::string& key, const std::string& fallback, const std::string& path) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    return (*it)["content"].get<std::string>();
  }
  refuse_key(path, key, "must be a string or an object with a string 'content', found " + describe_json(*it));
}

std::vector<std::pair<std::int64_t, std::string>> read_added_tokens(const json& j, const std::string& path) {
  const std::string key = "added_tokens_decoder";
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_object()) refuse_key(path, key, "must be an object, found " + describe_json(*it));
  std::vector<std::pair<std::int64_t, std::string>> out;
  for (const auto& [id_text, entry] : it->items()) {
    const std::string where = key + "." + id_text;
    if (id_text.empty() || id_text.size() > 12 || id_text.find_first_not_of("0123456789") != std::string::npos) {
      refuse_key(path, where, "is not a token id");
    }
    if (!entry.is_object() || !entry.contains("content") || !entry["content"].is_string()) {
      refuse_key(path, where, "must be an object with a string 'content'");
    }
    if (!get_bool(entry, "special", false, path + " (" + where + ")")) {
      refuse_key(path, where, "is an added non-special token, which this tokenizer does not support");
    }
    out.emplace_back(std::stoll(id_text), entry["content"].get<std::string>());
  }
  return out;
}

}  // namespace

BertTextOptions BertTokenizerOptions::text_options() const {
  BertTextOptions o;
  o.lowercase = do_lower_case;
  o.strip_accents = strip_accents.value_or(do_lower_case);
  o.tokenize_chinese_chars = tokenize_chinese_chars;
  return o;
}

BertTokenizerOptions read_tokenizer_config(const std::string& path) {
  const json j = read_json_object(path);
  BertTokenizerOptions o;
  o.do_lower_case = get_bool(j, "do_lower_case", o.do_lower_case, path);
  o.strip_accents = get_optional_bool(j, "strip_accents", path);
  o.tokenize_chinese_chars = get_bool(j, "tokenize_chinese_chars", o.tokenize_chinese_chars, path);
  if (!get_bool(j, "do_basic_tokenize", true, path)) {
    refuse_key(path, "do_basic_tokenize", "is false, which this tokenizer does not support");
  }
  o.unk_token = read_token(j, "unk_token", o.unk_token, path);
  o.sep_token = read_token(j, "sep_token", o.sep_token, path);
  o.pad_token = read_token(j, "pad_token", o.pad_token, path);
  o.cls_token = read_token(j, "cls_token", o.cls_token, path);
  o.mask_token = read_token(j, "mask_token", o.mask_token, path);
  o.added_special_tokens = read_added_tokens(j, path);
  return o;
}

BertTokenizer BertTokenizer::load(const std::string& vocab_path, BertTokenizerOptions options) {
  BertTokenizer t;
  t.vocab_path_ = vocab_path;
  t.options_ = std::move(options);
  t.lines_ = read_vocab_lines(vocab_path);
  for (std::size_t i = 0; i < t.lines_.size(); ++i) t.ids_[t.lines_[i]] = static_cast<std::int64_t>(i);
  const auto required = [&](const std::string& token, const char* role) {
    const std::int64_t id = t.id_of(token);
    if (id < 0) throw ModelFormatError(vocab_path, std::string("has no ") + role + " '" + token + "'");
    return id;
  };
  t.unk_id_ = required(t.options_.unk_token, "unk_token");
  t.sep_id_ = required(t.options_.sep_token, "sep_token");
  t.pad_id_ = required(t.options_.pad_token, "pad_token");
  t.cls_id_ = required(t.options_.cls_token, "cls_token");
  t.mask_id_ = t.id_of(t.options_.mask_token);
  for (const std::string* token : {&t.options_.unk_token, &t.options_.sep_token, &t.options_.pad_token,
                                   &t.options_.cls_token, &t.options_.mask_token}) {
    if (t.id_of(*token) >= 0 && !token->empty()) t.specials_.emplace_back(*token, t.id_of(*token));
  }
  for (const auto& [id, content] : t.options_.added_special_tokens) {
    if (t.id_of(content) != id) {
      throw ModelFormatError(vocab_path, "tokenizer_config.json adds special token '" + content + "' as id " +
                                             std::to_string(id) + ", which is not its id in this vocabulary");
    }
    if (!content.empty()) t.specials_.emplace_back(content, id);
  }
  for (const auto& special : t.specials_) t.special_starts_[static_cast<unsigned char>(special.first[0])] = true;
  return t;
}

BertTokenizer BertTokenizer::load_dir(const std::string& dir) {
  const std::string config = (std::filesystem::path(dir) / "tokenizer_config.json").string();
  BertTokenizerOptions options;
  if (std::filesystem::exists(config)) options = read_tokenizer_config(config);
  return load((std::filesystem::path(dir) / "vocab.txt").string(), std::move(options));
}

std::vector<std::string> BertTokenizer::missing_characters(const std::vector<std::string>& texts, int min_count) const {
  std::map<std::string, int> counts;
  for (const std::string& text : texts) {
    for (std::string& word : basic_tokenize(text, options_.text_options())) {
      if (split_utf8_chars(word).size() == 1 && id_of(word) < 0) ++counts[std::move(word)];
    }
  }
  std::vector<std::pair<std::string, int>> kept;
  for (auto& [word, count] : counts) {
    if (count >= min_count) kept.emplace_back(word, count);
  }
  std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> out;
  for (auto& [word, count] : kept) out.push_back(std::move(word));
  return out;
}

BertTokenizer BertTokenizer::with_tokens(const std::vector<std::string>& tokens) const {
  BertTokenizer grown = *this;
  for (const std::string& token : tokens) {
    if (token.empty() || grown.id_of(token) >= 0) continue;
    grown.ids_[token] = static_cast<std::int64_t>(grown.lines_.size());
    grown.lines_.push_back(token);
  }
  return grown;
}

std::int64_t BertTokenizer::id_of(const std::string& token) const {
  const auto it = ids_.find(token);
  return it == ids_.end() ? -1 : it->second;
}

void BertTokenizer::append_word_ids(const std::string& word, std::vector<std::int64_t>& out) const {
  // Byte offset of each character, plus the end (words come out of basic_tokenize as valid
  // UTF-8, so every byte that is not a continuation byte starts a character).
  std::vector<std::size_t> offsets;
  offsets.reserve(word.size() + 1);
  for (std::size_t i = 0; i < word.size(); ++i) {
    if ((static_cast<unsigned char>(word[i]) & 0xC0) != 0x80) offsets.push_back(i);
  }
  const std::size_t chars = offsets.size();
  offsets.push_back(word.size());
  if (chars > options_.max_input_chars_per_word) {
    out.push_back(unk_id_);
    return;
  }
  const std::size_t first = out.size();
  std::string candidate;
  for (std::size_t start = 0; start < chars;) {
    std::size_t end = chars;
    std::int64_t found = -1;
    for (; end > start; --end) {
      candidate.assign(start > 0 ? "##" : "");
      candidate.append(word, offsets[start], offsets[end] - offsets[start]);
      found = id_of(candidate);
      if (found >= 0) break;
    }
    if (found < 0) {  // one unmatchable piece makes the whole word unknown
      out.resize(first);
      out.push_back(unk_id_);
      return;
    }
    out.push_back(found);
    start = end;
  }
}

void BertTokenizer::append_text_ids(std::string_view text, std::vector<std::int64_t>& out) const {
  for (const std::string& word : basic_tokenize(text, options_.text_options())) append_word_ids(word, out);
}

std::vector<std::int64_t> BertTokenizer::tokenize_ids(std::string_view text) const {
  std::vector<std::int64_t> out;
  std::size_t segment = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (!special_starts_[static_cast<unsigned char>(text[i])]) {
      ++i;
      continue;
    }
    // Leftmost-longest match of a special token written literally in the text.
    const std::pair<std::string, std::int64_t>* best = nullptr;
    for (const auto& special : specials_) {
      if (text.compare(i, special.first.size(), special.first) == 0 &&
          (best == nullptr || special.first.size() > best->first.size())) {
        best = &special;
      }
    }
    if (best == nullptr) {
      ++i;
      continue;
    }
    append_text_ids(text.substr(segment, i - segment), out);
    out.push_back(best->second);
    i += best->first.size();
    segment = i;
  }
  append_text_ids(text.substr(segment), out);
  return out;
}

std::vector<std::string> BertTokenizer::tokenize(std::string_view text) const { return tokens_of(tokenize_ids(text)); }

std::vector<std::int64_t> BertTokenizer::encode(std::string_view text, std::size_t max_len) const {
  if (max_len < 2) throw ConfigError("max_len", "must be at least 2 to hold [CLS] and [SEP]");
  std::vector<std::int64_t> pieces = tokenize_ids(text);
  if (pieces.size() > max_len - 2) pieces.resize(max_len - 2);
  std::vector<std::int64_t> ids;
  ids.reserve(pieces.size() + 2);
  ids.push_back(cls_id_);
  ids.insert(ids.end(), pieces.begin(), pieces.end());
  ids.push_back(sep_id_);
  return ids;
}

std::vector<std::string> BertTokenizer::tokens_of(const std::vector<std::int64_t>& ids) const {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (std::int64_t id : ids) {
    out.push_back(id >= 0 && id < size() ? lines_[static_cast<std::size_t>(id)] : std::string());
  }
  return out;
}

}  // namespace newscls::hf
