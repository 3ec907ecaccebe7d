// UTF-8 helpers: validation, decoding to code points, splitting into characters.
//
// Titles are UTF-8; U+FFFD in the data is a real character and is kept.
//   if (!is_valid_utf8(s)) throw ...;
//   for (std::string_view ch : split_utf8_chars(s)) ...
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace newscls {

bool is_valid_utf8(std::string_view s);

// Code points of a valid UTF-8 string (invalid bytes decode as U+FFFD).
std::u32string decode_utf8(std::string_view s);
std::string encode_utf8(std::u32string_view s);
void append_utf8(char32_t cp, std::string& out);

// Views into s, one per character (invalid bytes come out one byte each).
std::vector<std::string_view> split_utf8_chars(std::string_view s);

}  // namespace newscls
