#include "newscls/core/utf8.h"

#include <utf8proc.h>

#include <algorithm>

namespace newscls {
namespace {

// Length of the UTF-8 sequence starting at s[i] when valid (no overlongs, no surrogates,
// nothing above U+10FFFF), else 0.
std::size_t valid_sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return len;
}

char32_t decode_at(std::string_view s, std::size_t i, std::size_t len) {
  const auto b = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k])); };
  switch (len) {
    case 1: return b(0);
    case 2: return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3: return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default: return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = valid_sequence_length(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::u32string decode_utf8(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = valid_sequence_length(s, i);
    out.push_back(len == 0 ? U'\uFFFD' : decode_at(s, i, len));
    i += len == 0 ? 1 : len;
  }
  return out;
}

void append_utf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string encode_utf8(std::u32string_view s) {
  std::string out;
  out.reserve(s.size() * 3);
  for (char32_t cp : s) append_utf8(cp, out);
  return out;
}

std::vector<std::string_view> split_utf8_chars(std::string_view s) {
  std::vector<std::string_view> chars;
  chars.reserve(s.size() / 2 + 1);
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = valid_sequence_length(s, i);
    if (len == 0) len = 1;
    chars.push_back(s.substr(i, len));
    i += len;
  }
  return chars;
}

bool is_space_char(char32_t cp) {
  return cp == U' ' || cp == U'\t' || cp == U'\n' || cp == U'\r' || cp == U'\f' || cp == U'\v' || cp == 0x3000 ||
         cp == 0x00A0 || cp == 0x0085;
}

bool is_invisible_char(char32_t cp) {
  const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return category == UTF8PROC_CATEGORY_CC || category == UTF8PROC_CATEGORY_CF;
}

bool has_invisible_char(std::string_view s) {
  const std::u32string chars = decode_utf8(s);
  return std::any_of(chars.begin(), chars.end(), is_invisible_char);
}

bool has_visible_char(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = valid_sequence_length(s, i);
    const char32_t cp = len == 0 ? U'\uFFFD' : decode_at(s, i, len);
    if (!is_space_char(cp) && !is_invisible_char(cp)) return true;
    i += len == 0 ? 1 : len;
  }
  return false;
}

std::string quoted_for_message(std::string_view s, std::size_t max_bytes) {
  const std::string_view head = s.substr(0, max_bytes);
  std::string out;
  for (std::string_view ch : split_utf8_chars(head)) {
    const auto first = static_cast<unsigned char>(ch[0]);
    if (ch.size() > 1 ? is_valid_utf8(ch) : first >= 0x20 && first < 0x7f) {
      out += ch;
      continue;
    }
    for (const char c : ch) {
      static const char kHex[] = "0123456789abcdef";
      const auto b = static_cast<unsigned char>(c);
      out += {'\\', 'x', kHex[b >> 4], kHex[b & 15]};
    }
  }
  return s.size() > max_bytes ? out + "..." : out;
}

}  // namespace newscls
