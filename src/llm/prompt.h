// The prompt: a fixed system prefix (label set, answer instruction), optional few-shot
// turns, then the bare title as the last user message.
//
// Everything before the title is identical for every request, so providers' prompt
// caches hit on it. kPromptVersion names the template and is stored in the bundle; the
// response cache keys on the messages themselves, so any change of wording asks again.
//
//   Prompt p = Prompt::build(names, /*json_mode=*/false, draw_few_shot(train, 2, seed));
//   nlohmann::json messages = p.messages("中国队夺冠");
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/label_names.h"
#include "newscls/core/data.h"

namespace newscls::llm {

constexpr const char* kPromptVersion = "newscls-llm-prompt-v1";

struct FewShotExample {
  std::string title;
  int label = 0;
};

// k examples per class from train, drawn with seed, interleaved class by class.
// A class with fewer than k titles gives what it has.
std::vector<FewShotExample> draw_few_shot(const Dataset& train, int num_labels, int k, std::uint64_t seed);

class Prompt {
 public:
  static Prompt build(std::vector<LabelName> names, bool json_mode, std::vector<FewShotExample> few_shot);
  // From a bundle: the stored system text is used as is, so a bundle keeps its prompt.
  static Prompt restore(std::vector<LabelName> names, bool json_mode, std::string version, std::string system,
                        std::vector<FewShotExample> few_shot);

  nlohmann::json messages(const std::string& title) const;
  // The answer a perfect model gives for a class (used for few-shot turns).
  std::string answer_for(int label) const;

  const std::vector<LabelName>& names() const { return names_; }
  const std::string& version() const { return version_; }
  const std::string& system() const { return system_; }
  const std::vector<FewShotExample>& few_shot() const { return few_shot_; }
  bool json_mode() const { return json_mode_; }

 private:
  std::vector<LabelName> names_;
  bool json_mode_ = false;
  std::string version_, system_;
  std::vector<FewShotExample> few_shot_;
};

std::string system_prompt(const std::vector<LabelName>& names, bool json_mode);

}  // namespace newscls::llm
