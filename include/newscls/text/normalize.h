// Text normalisation and character n-grams, identical at training and prediction time.
//
// normalize_title: full-width ASCII forms (U+FF01..U+FF5E) to half-width, the ideographic
// space to a space, ASCII lowercase, runs of whitespace folded to one space, trimmed;
// control and format characters (U+001F, U+200B, U+FEFF, ...) deleted, as BERT's tokenizer
// does. Everything else, U+FFFD included, is kept.
//
//   std::string t = normalize_title("ＮＢＡ　季后赛");   // "nba 季后赛"
//   auto grams = char_ngrams(split_utf8_chars(t), 1, 2);
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace newscls {

std::string normalize_title(std::string_view title);

// normalize_title, and with fold_punctuation every punctuation character (Unicode general
// category P*: "，" "？" "！" "：" "《" ...) also becomes a space, except the ASCII marks used
// inside numbers and names (. _ % - / ' & # @ * and backslash): a separator then reads the same whichever
// mark an outlet uses. THUCNews separates clauses with spaces, other outlets with commas, and
// its rare "？"/"！" are mostly sports titles.
//   normalize_title("王者荣耀：新英雄？涨2.5%", true);   // "王者荣耀 新英雄 涨2.5%"
std::string normalize_title(std::string_view title, bool fold_punctuation);

// Contiguous character n-grams of orders n_min..n_max, in order of position then order.
// Spaces are characters too; grams consisting only of a space are dropped.
std::vector<std::string> char_ngrams(const std::vector<std::string_view>& chars, int n_min, int n_max);

}  // namespace newscls
