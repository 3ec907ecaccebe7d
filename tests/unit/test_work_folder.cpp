#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "newscls/atomic_file.h"
#include "newscls/error.h"
#include "test_support.h"
#include "workflow/work_folder.h"

namespace fs = std::filesystem;

namespace newscls {
namespace {

using testing::scratch_dir;

const nlohmann::json kSettings = {{"family", "bert"}, {"config", {{"lr", 2e-5}, {"hidden", 64}}}, {"seed", 1}};

std::string work_with_checkpoint() {
  const std::string work = scratch_dir() + "/bert.work";
  EXPECT_FALSE(prepare_work_folder(work, kSettings, /*resume=*/false, ChangedWork::kRefuse));
  write_file_atomic(work + "/checkpoint.bin", "weights");
  return work;
}

TEST(WorkFolder, ResumeContinuesOnlyUnderTheSameSettings) {
  const std::string work = work_with_checkpoint();
  EXPECT_TRUE(prepare_work_folder(work, kSettings, true, ChangedWork::kRefuse));
  EXPECT_TRUE(fs::exists(work + "/checkpoint.bin"));

  nlohmann::json wider = kSettings;
  wider["config"]["hidden"] = 128;
  try {
    prepare_work_folder(work, wider, true, ChangedWork::kRefuse);
    FAIL() << "a checkpoint of another config was continued";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("hidden 64 -> 128"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::exists(work + "/checkpoint.bin")) << "a refusal keeps the work";
}

TEST(WorkFolder, ChangedSettingsStartOverWhenAsked) {
  const std::string work = work_with_checkpoint();
  nlohmann::json reseeded = kSettings;
  reseeded["seed"] = 2;
  EXPECT_FALSE(prepare_work_folder(work, reseeded, true, ChangedWork::kStartOver));
  EXPECT_FALSE(fs::exists(work + "/checkpoint.bin"));
  EXPECT_TRUE(prepare_work_folder(work, reseeded, true, ChangedWork::kRefuse)) << "the new settings were recorded";
}

TEST(WorkFolder, TrainingWithoutResumeEmptiesTheFolder) {
  const std::string work = work_with_checkpoint();
  EXPECT_FALSE(prepare_work_folder(work, kSettings, false, ChangedWork::kRefuse));
  EXPECT_FALSE(fs::exists(work + "/checkpoint.bin")) << "a later --resume would find an older run's checkpoint";
}

TEST(WorkFolder, DescribesNestedAndMissingKeys) {
  nlohmann::json now = kSettings;
  now["config"]["lr"] = 3e-5;
  now["init"] = "hf:bert";
  EXPECT_EQ(describe_changes(kSettings, now), "lr 2e-05 -> 3e-05, init unset -> \"hf:bert\"");
}

}  // namespace
}  // namespace newscls
