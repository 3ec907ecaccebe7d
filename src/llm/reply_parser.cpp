#include "llm/reply_parser.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "newscls/core/metrics.h"
#include "newscls/core/utf8.h"
#include "newscls/text/normalize.h"

namespace newscls::llm {
namespace {

bool is_punctuation(char32_t cp) {
  if (cp < 0x80) return cp != U' ' && !std::isalnum(static_cast<int>(cp));
  return (cp >= 0x00A1 && cp <= 0x00BF) || (cp >= 0x2010 && cp <= 0x206F) || (cp >= 0x3000 && cp <= 0x303F) ||
         (cp >= 0xFE10 && cp <= 0xFE1F) || (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF01 && cp <= 0xFF0F) ||
         (cp >= 0xFF1A && cp <= 0xFF20) || (cp >= 0xFF3B && cp <= 0xFF40) || (cp >= 0xFF5B && cp <= 0xFF65);
}

// Lowercase, full-width folded, punctuation turned into spaces, spaces collapsed.
std::string normalize_reply(std::string_view reply) {
  std::u32string cps = decode_utf8(normalize_title(reply));
  for (char32_t& cp : cps) {
    if (is_punctuation(cp)) cp = U' ';
  }
  return normalize_title(encode_utf8(cps));
}

std::string_view trim(std::string_view s) {
  const char* kSpace = " \t\r\n";
  const auto first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

bool is_ascii(const std::string& s) {
  for (unsigned char c : s) {
    if (c >= 0x80) return false;
  }
  return true;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

bool mentions(const std::string& text, const std::string& alias) {
  if (!is_ascii(alias)) return text.find(alias) != std::string::npos;
  for (std::size_t pos = text.find(alias); pos != std::string::npos; pos = text.find(alias, pos + 1)) {
    const bool left_ok = pos == 0 || !is_word_char(text[pos - 1]);
    const std::size_t end = pos + alias.size();
    const bool right_ok = end == text.size() || !is_word_char(text[end]);
    if (left_ok && right_ok) return true;
  }
  return false;
}

int exact_match(std::string_view reply, const std::vector<LabelName>& names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (reply == names[i].en || (!names[i].zh.empty() && reply == names[i].zh)) return static_cast<int>(i);
  }
  return kUnknownLabel;
}

int normalized_match(const std::string& norm, const std::vector<LabelName>& names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (const std::string& alias : names[i].aliases) {
      if (norm == alias) return static_cast<int>(i);
    }
  }
  return kUnknownLabel;
}

int single_mention(const std::string& norm, const std::vector<LabelName>& names) {
  int found = kUnknownLabel;
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (const std::string& alias : names[i].aliases) {
      if (!mentions(norm, alias)) continue;
      if (found != kUnknownLabel && found != static_cast<int>(i)) return kUnknownLabel;
      found = static_cast<int>(i);
    }
  }
  return found;
}

int parse_plain(std::string_view reply, const std::vector<LabelName>& names) {
  const std::string_view trimmed = trim(reply);
  if (trimmed.empty()) return kUnknownLabel;
  if (int id = exact_match(trimmed, names); id != kUnknownLabel) return id;
  const std::string norm = normalize_reply(trimmed);
  if (norm.empty()) return kUnknownLabel;
  if (int id = normalized_match(norm, names); id != kUnknownLabel) return id;
  return single_mention(norm, names);
}

// The "label" value of the first JSON object in the reply (code fences tolerated).
bool json_label(std::string_view reply, std::string& label) {
  const auto open = reply.find('{');
  const auto close = reply.rfind('}');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return false;
  const auto parsed = nlohmann::json::parse(reply.substr(open, close - open + 1), nullptr, false);
  if (!parsed.is_object()) return false;
  for (const char* key : {"label", "category", "class"}) {
    auto it = parsed.find(key);
    if (it != parsed.end() && it->is_string()) {
      label = it->get<std::string>();
      return true;
    }
  }
  return false;
}

}  // namespace

int parse_reply(std::string_view reply, const std::vector<LabelName>& names, bool json_mode) {
  if (!is_valid_utf8(reply)) return kUnknownLabel;
  if (json_mode) {
    if (int id = exact_match(trim(reply), names); id != kUnknownLabel) return id;
    std::string label;
    if (json_label(reply, label)) return parse_plain(label, names);
  }
  return parse_plain(reply, names);
}

}  // namespace newscls::llm
