// The class names a chat model sees and may answer with, in English and Chinese.
//
// English names come from class.txt; the Chinese name of each THUCNews class is built in
// (a class outside that table gets no Chinese name). Aliases are the extra spellings the
// reply parser accepts for a class ("real estate" for realty, "房地产" for 房产).
//
//   std::vector<LabelName> names = label_names_for(labels);
//   names[7].en == "sports", names[7].zh == "体育"
#pragma once

#include <string>
#include <vector>

#include "newscls/core/data.h"

namespace newscls::llm {

struct LabelName {
  std::string en;
  std::string zh;                    // empty when no Chinese name is known
  std::vector<std::string> aliases;  // en, zh and synonyms; lowercase ASCII
};

std::vector<LabelName> label_names_for(const LabelSet& labels);
// Rebuilds names from stored (en, zh) pairs, adding the aliases of known classes.
LabelName make_label_name(const std::string& en, const std::string& zh);

}  // namespace newscls::llm
