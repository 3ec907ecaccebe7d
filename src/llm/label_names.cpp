#include "llm/label_names.h"

#include <algorithm>
#include <cctype>

namespace newscls::llm {
namespace {

struct KnownClass {
  const char* en;
  const char* zh;
  std::vector<const char*> synonyms;
};

// Synonyms are kept few and unambiguous: each must name its class and no other.
const std::vector<KnownClass>& known_classes() {
  static const std::vector<KnownClass> kKnown = {
      {"finance", "财经", {"financial"}},
      {"realty", "房产", {"real estate", "房地产", "楼市"}},
      {"stocks", "股票", {"stock", "stock market", "股市"}},
      {"education", "教育", {}},
      {"science", "科技", {"technology", "tech", "science and technology"}},
      {"society", "社会", {"social news"}},
      {"politics", "时政", {"political", "政治"}},
      {"sports", "体育", {"sport"}},
      {"game", "游戏", {"games", "gaming", "video games"}},
      {"entertainment", "娱乐", {}},
  };
  return kKnown;
}

std::string ascii_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void add_alias(std::vector<std::string>& aliases, const std::string& alias) {
  if (alias.empty()) return;
  const std::string lowered = ascii_lower(alias);
  if (std::find(aliases.begin(), aliases.end(), lowered) == aliases.end()) aliases.push_back(lowered);
}

}  // namespace

LabelName make_label_name(const std::string& en, const std::string& zh) {
  LabelName name{en, zh, {}};
  add_alias(name.aliases, en);
  add_alias(name.aliases, zh);
  for (const KnownClass& known : known_classes()) {
    if (ascii_lower(en) != known.en) continue;
    for (const char* synonym : known.synonyms) add_alias(name.aliases, synonym);
  }
  return name;
}

std::vector<LabelName> label_names_for(const LabelSet& labels) {
  std::vector<LabelName> names;
  for (const std::string& en : labels.names) {
    std::string zh;
    for (const KnownClass& known : known_classes()) {
      if (ascii_lower(en) == known.en) zh = known.zh;
    }
    names.push_back(make_label_name(en, zh));
  }
  return names;
}

}  // namespace newscls::llm
