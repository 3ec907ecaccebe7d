#include "hf/bert_text.h"

#include <utf8proc.h>

#include <cstdint>

#include "newscls/core/utf8.h"

namespace newscls::hf {
namespace {

utf8proc_category_t category_of(char32_t cp) { return utf8proc_category(static_cast<utf8proc_int32_t>(cp)); }

std::u32string clean(const std::u32string& in) {
  std::u32string out;
  out.reserve(in.size());
  for (char32_t cp : in) {
    if (cp == 0 || cp == 0xFFFD || is_bert_control(cp)) continue;
    out.push_back(is_bert_whitespace(cp) ? U' ' : cp);
  }
  return out;
}

std::u32string space_cjk(const std::u32string& in) {
  std::u32string out;
  out.reserve(in.size() * 3);
  for (char32_t cp : in) {
    if (is_cjk_ideograph(cp)) {
      out += U' ';
      out += cp;
      out += U' ';
    } else {
      out += cp;
    }
  }
  return out;
}

// False when NFD leaves the text as it is (no character with a decomposition, Hangul
// syllables decomposing by rule, and none with a combining class to reorder), the common case
// for Chinese titles, which then skip the UTF-8 round trip through utf8proc.
bool may_change_under_nfd(const std::u32string& text) {
  for (char32_t cp : text) {
    if (cp < 0xC0) continue;
    if (cp >= 0xAC00 && cp <= 0xD7A3) return true;
    const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
    if (p->decomp_seqindex != UINT16_MAX || p->combining_class != 0) return true;
  }
  return false;
}

std::u32string drop_nonspacing_marks(const std::u32string& in) {
  std::u32string out;
  out.reserve(in.size());
  for (char32_t cp : in) {
    if (category_of(cp) != UTF8PROC_CATEGORY_MN) out += cp;
  }
  return out;
}

// NFD (canonical decomposition and ordering, utf8proc), then nonspacing marks dropped.
std::u32string strip_accents(const std::u32string& in) {
  if (!may_change_under_nfd(in)) return drop_nonspacing_marks(in);
  const std::string utf8 = encode_utf8(in);
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(utf8.data());
  const auto length = static_cast<utf8proc_ssize_t>(utf8.size());
  std::vector<utf8proc_int32_t> buffer(utf8.size() + 1);
  utf8proc_ssize_t n = utf8proc_decompose(bytes, length, buffer.data(), static_cast<utf8proc_ssize_t>(buffer.size()),
                                          UTF8PROC_DECOMPOSE);
  if (n > static_cast<utf8proc_ssize_t>(buffer.size())) {
    buffer.resize(static_cast<std::size_t>(n));
    n = utf8proc_decompose(bytes, length, buffer.data(), n, UTF8PROC_DECOMPOSE);
  }
  if (n < 0) return drop_nonspacing_marks(in);  // cannot happen: the input is valid UTF-8
  std::u32string decomposed;
  decomposed.reserve(static_cast<std::size_t>(n));
  for (utf8proc_ssize_t i = 0; i < n; ++i) decomposed += static_cast<char32_t>(buffer[static_cast<std::size_t>(i)]);
  return drop_nonspacing_marks(decomposed);
}

std::u32string lowercase(const std::u32string& in) {
  std::u32string out;
  out.reserve(in.size());
  for (char32_t cp : in) {
    if (cp == 0x130) {  // the one unconditional one-to-two mapping: İ -> i + combining dot
      out += U"i\u0307";
    } else {
      out += static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
    }
  }
  return out;
}

std::vector<std::string> split_words(const std::u32string& text) {
  std::vector<std::string> words;
  std::string current;
  const auto flush = [&] {
    if (!current.empty()) words.push_back(std::move(current));
    current.clear();
  };
  for (char32_t cp : text) {
    if (is_bert_whitespace(cp)) {
      flush();
    } else if (is_bert_punctuation(cp)) {
      flush();
      append_utf8(cp, current);
      flush();
    } else {
      append_utf8(cp, current);
    }
  }
  flush();
  return words;
}

}  // namespace

bool is_bert_whitespace(char32_t cp) {
  if ((cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85) return true;
  const utf8proc_category_t c = category_of(cp);
  return c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP;
}

bool is_bert_control(char32_t cp) {
  if (cp == U'\t' || cp == U'\n' || cp == U'\r') return false;
  const utf8proc_category_t c = category_of(cp);
  return c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF || c == UTF8PROC_CATEGORY_CO;
}

bool is_bert_punctuation(char32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) {
    return true;
  }
  const utf8proc_category_t c = category_of(cp);
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

// The ranges transformers 5 uses (tokenizers' BertNormalizer; its Extension E range starts
// at U+2B920, not at U+2B820 as in the old Python tokenizer).
bool is_cjk_ideograph(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

std::vector<std::string> basic_tokenize(std::string_view text, const BertTextOptions& options) {
  std::u32string chars = clean(decode_utf8(text));
  if (options.tokenize_chinese_chars) chars = space_cjk(chars);
  if (options.strip_accents) chars = strip_accents(chars);
  if (options.lowercase) chars = lowercase(chars);
  return split_words(chars);
}

}  // namespace newscls::hf
