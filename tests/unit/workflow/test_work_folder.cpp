#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "newscls/core/atomic_file.h"
#include "newscls/core/error.h"
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

TEST(WorkFolder, UncheckedKeysMayChangeOnResumeAndAreRecordedAnew) {
  const std::string work = scratch_dir() + "/bert.work";
  nlohmann::json one_thread = kSettings;
  one_thread["config"]["max_threads"] = 1;
  EXPECT_FALSE(prepare_work_folder(work, one_thread, false, ChangedWork::kRefuse, {"max_threads"}));
  write_file_atomic(work + "/checkpoint.bin", "weights");
  nlohmann::json two_threads = kSettings;
  two_threads["config"]["max_threads"] = 2;
  check_work_folder(work, two_threads, {"max_threads"});
  EXPECT_TRUE(prepare_work_folder(work, two_threads, true, ChangedWork::kRefuse, {"max_threads"}));
  EXPECT_EQ(nlohmann::json::parse(read_file(work + "/settings.json")), two_threads);
  nlohmann::json wider = two_threads;
  wider["config"]["hidden"] = 128;
  EXPECT_THROW(check_work_folder(work, wider, {"max_threads"}), UsageError) << "other keys are still compared";
  EXPECT_THROW(prepare_work_folder(work, one_thread, true, ChangedWork::kRefuse), UsageError)
      << "without the list, max_threads is compared";
}

TEST(WorkFolder, ChangedSettingsStartOverWhenAsked) {
  const std::string work = work_with_checkpoint();
  nlohmann::json reseeded = kSettings;
  reseeded["seed"] = 2;
  EXPECT_FALSE(prepare_work_folder(work, reseeded, true, ChangedWork::kStartOver));
  EXPECT_FALSE(fs::exists(work + "/checkpoint.bin"));
  write_file_atomic(work + "/checkpoint.bin", "new weights");
  EXPECT_TRUE(prepare_work_folder(work, reseeded, true, ChangedWork::kRefuse)) << "the new settings were recorded";
}

TEST(WorkFolder, TrainingWithoutResumeKeepsOnlyWorkOfTheSameSettings) {
  const std::string work = work_with_checkpoint();
  EXPECT_FALSE(prepare_work_folder(work, kSettings, false, ChangedWork::kRefuse));
  EXPECT_TRUE(fs::exists(work + "/checkpoint.bin")) << "a rerun of the same training keeps what it would redo";
  nlohmann::json other = kSettings;
  other["seed"] = 5;
  EXPECT_FALSE(prepare_work_folder(work, other, false, ChangedWork::kRefuse));
  EXPECT_FALSE(fs::exists(work + "/checkpoint.bin")) << "a later --resume would find another training's checkpoint";
}

TEST(WorkFolder, AFolderWithNothingButItsRecordTakesNewSettings) {
  const std::string work = scratch_dir() + "/bert.work";
  prepare_work_folder(work, kSettings, false, ChangedWork::kRefuse);
  nlohmann::json other = kSettings;
  other["seed"] = 5;
  EXPECT_FALSE(prepare_work_folder(work, other, true, ChangedWork::kRefuse)) << "nothing to continue or to lose";
  write_file_atomic(work + "/checkpoint.bin", "weights");
  EXPECT_TRUE(prepare_work_folder(work, other, true, ChangedWork::kRefuse));
}

TEST(WorkFolder, AnUnreadableRecordIsContinuedOnceAndThenRecorded) {
  for (const char* damaged : {"garbage{", "[1, 2]", ""}) {
    const std::string work = work_with_checkpoint();
    write_file_atomic(work + "/settings.json", damaged);
    EXPECT_TRUE(prepare_work_folder(work, kSettings, true, ChangedWork::kRefuse)) << damaged;
    nlohmann::json other = kSettings;
    other["seed"] = 5;
    EXPECT_THROW(prepare_work_folder(work, other, true, ChangedWork::kRefuse), UsageError) << damaged;
    fs::remove_all(work);
  }
}

TEST(WorkFolder, AnotherRankChecksWithoutWriting) {
  const std::string work = work_with_checkpoint();
  EXPECT_NO_THROW(check_work_folder(work, kSettings));
  nlohmann::json other = kSettings;
  other["world_size"] = 2;
  EXPECT_THROW(check_work_folder(work, other), UsageError);
  EXPECT_TRUE(prepare_work_folder(work, kSettings, true, ChangedWork::kRefuse)) << "the record is unchanged";
}

TEST(WorkFolder, DescribesNestedAndMissingKeys) {
  nlohmann::json now = kSettings;
  now["config"]["lr"] = 3e-5;
  now["init"] = "hf:bert";
  EXPECT_EQ(describe_changes(kSettings, now), "lr 2e-05 -> 3e-05, init unset -> \"hf:bert\"");
}

}  // namespace
}  // namespace newscls
