#include "newscls/text.h"
#include "newscls/utf8.h"

namespace newscls {
namespace {

bool is_space(char32_t cp) {
  return cp == U' ' || cp == U'\t' || cp == U'\n' || cp == U'\r' || cp == U'\f' || cp == U'\v' ||
         cp == 0x3000 || cp == 0x00A0;
}

char32_t fold(char32_t cp) {
  if (cp >= 0xFF01 && cp <= 0xFF5E) cp -= 0xFEE0;  // full-width ASCII forms
  if (cp >= U'A' && cp <= U'Z') cp += U'a' - U'A';
  return cp;
}

}  // namespace

std::string normalize_title(std::string_view title) {
  std::string out;
  out.reserve(title.size());
  bool pending_space = false;
  for (char32_t cp : decode_utf8(title)) {
    if (is_space(cp)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    append_utf8(fold(cp), out);
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
