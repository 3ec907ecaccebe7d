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

// s for an error message: valid characters as they are, control bytes and bytes that are not
// UTF-8 as \xNN (a NUL would end the message, a stray byte make it invalid text), cut after
// max_bytes of s with "...".
std::string quoted_for_message(std::string_view s, std::size_t max_bytes);

// Whitespace in titles: ASCII white space, the ideographic space U+3000, no-break space U+00A0,
// next line U+0085.
bool is_space_char(char32_t cp);
// Control and format characters (Unicode Cc and Cf: U+001F, U+200B, U+FEFF, ...), invisible;
// BERT's tokenizer deletes them.
bool is_invisible_char(char32_t cp);
// True when s has a character that is neither space nor invisible.
bool has_visible_char(std::string_view s);
// True when valid UTF-8 s holds a control or format character (a tab, say).
bool has_invisible_char(std::string_view s);

}  // namespace newscls
