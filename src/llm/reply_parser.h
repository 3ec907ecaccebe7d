// Maps a chat model's reply to a class id, or kUnknownLabel; never guesses.
//
// Order: (1) the trimmed reply is exactly a class name (English or Chinese);
// (2) in JSON mode, a JSON object's "label" (or "category") value, parsed by the rules
// here; (3) the reply normalised (full-width folded, lowercase, punctuation stripped)
// equals a name or alias; (4) chatter: exactly one class is mentioned (ASCII names as
// whole words, Chinese names as substrings). No mention, or mentions of two classes,
// give kUnknownLabel.
//
//   int id = parse_reply("答案：体育。", names, false);   // the id of sports
#pragma once

#include <string_view>
#include <vector>

#include "llm/label_names.h"

namespace newscls::llm {

int parse_reply(std::string_view reply, const std::vector<LabelName>& names, bool json_mode);

}  // namespace newscls::llm
