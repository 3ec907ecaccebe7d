#include "newscls/text/normalize.h"

#include <utf8proc.h>

#include "newscls/core/utf8.h"

namespace newscls {
namespace {

char32_t fold(char32_t cp) {
  if (cp >= 0xFF01 && cp <= 0xFF5E) cp -= 0xFEE0;  // full-width ASCII forms
  if (cp >= U'A' && cp <= U'Z') cp += U'a' - U'A';
  return cp;
}

// Punctuation that separates clauses or sentences. ASCII marks that sit inside numbers,
// names and addresses ("2.5%", "230-290", "a/b", "c&a", "#1") stay characters.
bool is_separating_punctuation(char32_t cp) {
  if (cp < 0x80 && std::string_view("._%-/'&#@*\\").find(static_cast<char>(cp)) != std::string_view::npos) {
    return false;
  }
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO: return true;
    default: return false;
  }
}

}  // namespace

std::string normalize_title(std::string_view title) { return normalize_title(title, false); }

std::string normalize_title(std::string_view title, bool fold_punctuation) {
  std::string out;
  out.reserve(title.size());
  bool pending_space = false;
  for (char32_t cp : decode_utf8(title)) {
    cp = fold(cp);
    if (is_space_char(cp) || (fold_punctuation && is_separating_punctuation(cp))) {
      pending_space = !out.empty();
      continue;
    }
    if (is_invisible_char(cp)) continue;  // also keeps U+001F from forging tfidf-rf's piece prefix
    if (pending_space) out.push_back(' ');
    pending_space = false;
    append_utf8(cp, out);
  }
  return out;
}

std::vector<std::string> char_ngrams(const std::vector<std::string_view>& chars, int n_min, int n_max) {
  std::vector<std::string> grams;
  const int count = static_cast<int>(chars.size());
  grams.reserve(static_cast<std::size_t>(count) * static_cast<std::size_t>(n_max - n_min + 1));
  for (int start = 0; start < count; ++start) {
    std::string gram;
    for (int n = 1; n <= n_max && start + n <= count; ++n) {
      gram.append(chars[start + n - 1]);
      if (n >= n_min && gram != " ") grams.push_back(gram);
    }
  }
  return grams;
}

}  // namespace newscls
