#include "llm/prompt.h"

#include <random>
#include <utility>

#include "newscls/core/error.h"

namespace newscls::llm {
namespace {

// Fisher-Yates with raw engine output, so the draw is the same on every standard library.
void seeded_shuffle(std::vector<std::size_t>& v, std::mt19937_64& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng() % i]);
}

std::string label_line(const LabelName& name) {
  return name.zh.empty() ? "- " + name.en : "- " + name.zh + " (" + name.en + ")";
}

}  // namespace

std::vector<FewShotExample> draw_few_shot(const Dataset& train, int num_labels, int k, std::uint64_t seed) {
  std::vector<std::vector<std::size_t>> by_class(static_cast<std::size_t>(num_labels));
  for (std::size_t i = 0; i < train.size(); ++i) {
    const int label = train.labels[i];
    if (label >= 0 && label < num_labels && !train.titles[i].empty()) {
      by_class[static_cast<std::size_t>(label)].push_back(i);
    }
  }
  std::mt19937_64 rng(seed);
  for (auto& indices : by_class) seeded_shuffle(indices, rng);
  std::vector<FewShotExample> examples;
  for (std::size_t round = 0; round < static_cast<std::size_t>(k); ++round) {
    for (int label = 0; label < num_labels; ++label) {
      const auto& indices = by_class[static_cast<std::size_t>(label)];
      if (round < indices.size()) examples.push_back({train.titles[indices[round]], label});
    }
  }
  return examples;
}

std::string system_prompt(const std::vector<LabelName>& names, bool json_mode) {
  std::string text =
      "你是新闻标题分类器。You classify Chinese news headlines. The user message is one "
      "headline. Choose exactly one category from this list:\n";
  for (const LabelName& name : names) text += label_line(name) + "\n";
  if (json_mode) {
    text += "Answer with a JSON object only, of the form {\"label\": \"<English category name>\"}.";
  } else {
    text += "Answer with the category name only (Chinese or English), no explanation.";
  }
  return text;
}

Prompt Prompt::build(std::vector<LabelName> names, bool json_mode, std::vector<FewShotExample> few_shot) {
  std::string system = system_prompt(names, json_mode);
  return restore(std::move(names), json_mode, kPromptVersion, std::move(system), std::move(few_shot));
}

Prompt Prompt::restore(std::vector<LabelName> names, bool json_mode, std::string version, std::string system,
                       std::vector<FewShotExample> few_shot) {
  Prompt p;
  p.names_ = std::move(names);
  p.json_mode_ = json_mode;
  p.version_ = std::move(version);
  p.system_ = std::move(system);
  p.few_shot_ = std::move(few_shot);
  for (const LabelName& name : p.names_) {
    if (name.en.empty()) throw ConfigError("labels", "a label without a name");
  }
  for (const FewShotExample& ex : p.few_shot_) {
    if (ex.label < 0 || ex.label >= static_cast<int>(p.names_.size())) {
      throw ConfigError("few_shot", "example label " + std::to_string(ex.label) + " out of range");
    }
  }
  return p;
}

std::string Prompt::answer_for(int label) const {
  const LabelName& name = names_.at(static_cast<std::size_t>(label));
  if (json_mode_) return nlohmann::json({{"label", name.en}}).dump();
  return name.zh.empty() ? name.en : name.zh;
}

nlohmann::json Prompt::messages(const std::string& title) const {
  nlohmann::json messages = nlohmann::json::array();
  messages.push_back({{"role", "system"}, {"content", system_}});
  for (const FewShotExample& ex : few_shot_) {
    messages.push_back({{"role", "user"}, {"content", ex.title}});
    messages.push_back({{"role", "assistant"}, {"content", answer_for(ex.label)}});
  }
  messages.push_back({{"role", "user"}, {"content", title}});
  return messages;
}

}  // namespace newscls::llm
