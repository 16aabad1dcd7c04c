#include "fp8lab/error.hpp"
#include "fp8lab/study.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

namespace fp8lab {
namespace {

nlohmann::json valid_config() {
  return nlohmann::json::parse(R"({
    "name": "kjv-tiny",
    "train_args": ["--preset", "tiny", "--steps", "200"],
    "eval_args": ["--batch", "8"],
    "arms": [
      {"name": "bf16", "policy": "bf16"},
      {"name": "fp8-mlp", "policy": "fp8-mlp"},
      {"name": "bf16-recompute", "policy": "bf16", "mlp_recompute": true, "resource_only": true}
    ]
  })");
}

TEST(StudyPlan, ParsesArmsAndDefaultsControlToFirstArm) {
  StudyPlan plan = parse_study_plan(valid_config());
  EXPECT_EQ(plan.name, "kjv-tiny");
  ASSERT_EQ(plan.arms.size(), 3u);
  EXPECT_EQ(plan.control, "bf16");
  EXPECT_TRUE(plan.arms[2].mlp_recompute);
  EXPECT_TRUE(plan.arms[2].resource_only);
  EXPECT_FALSE(plan.arms[1].resource_only);
  EXPECT_EQ(plan.train_args.size(), 4u);
  EXPECT_EQ(plan.eval_args, (std::vector<std::string>{"--batch", "8"}));
}

void expect_rejected(nlohmann::json config, const std::string& fragment) {
  try {
    parse_study_plan(config);
    FAIL() << "accepted: " << config.dump();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find(fragment), std::string::npos) << e.message();
  }
}

TEST(StudyPlan, SeedGroupsAreMatchedAgainstTheirOwnBf16Arm) {
  auto c = valid_config();
  c["arms"].push_back({{"name", "fp8-seed7"}, {"policy", "fp8-mlp"}, {"group", "seed7"}});
  expect_rejected(c, "group 'seed7' (arm 'fp8-seed7') has no plain bf16 arm");
  c["arms"].push_back({{"name", "bf16-seed7"}, {"policy", "bf16"}, {"group", "seed7"}});
  StudyPlan plan = parse_study_plan(c);
  EXPECT_EQ(study_reference(plan, plan.arms[1]).name, "bf16");       // control's group
  EXPECT_EQ(study_reference(plan, plan.arms[2]).name, "bf16");       // recompute arm, same group
  EXPECT_EQ(study_reference(plan, plan.arms[3]).name, "bf16-seed7");
  EXPECT_EQ(study_reference(plan, plan.arms[4]).name, "bf16-seed7");
}

// The run order (each group's reference before its arms, the control's group first) and the
// --plan report: each arm's reference and state in the out directory, and the time left at the
// longest finished arm's time.
TEST(StudyPlan, RunOrderAndPlanReport) {
  auto c = valid_config();
  c["arms"].push_back({{"name", "fp8-seed2"}, {"policy", "fp8-mlp"}, {"group", "seed2"}});
  c["arms"].push_back({{"name", "bf16-seed2"}, {"policy", "bf16"}, {"group", "seed2"}});
  const StudyPlan plan = parse_study_plan(c);
  EXPECT_EQ(study_run_order(plan), (std::vector<std::size_t>{0, 1, 2, 4, 3}));
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / ("fp8lab_plan_" + std::to_string(::getpid()));
  std::filesystem::remove_all(out);
  EXPECT_NE(study_plan_report(plan, out).find("5 arms to train; no arm has finished"),
            std::string::npos);
  for (const char* arm : {"bf16", "fp8-mlp"}) {
    std::filesystem::create_directories(out / "arms" / arm / "run");
    std::ofstream(out / "arms" / arm / "DONE") << "";
    std::ofstream(out / "arms" / arm / "timing.json")
        << (std::string(arm) == "bf16" ? R"({"train_segments_s": [100, 20], "eval_bf16": 5})"
                                       : R"({"train_segments_s": [90], "eval_bf16": 4})");
  }
  std::filesystem::create_directories(out / "arms" / "bf16-seed2" / "run");
  const std::string report = study_plan_report(plan, out);
  EXPECT_NE(report.find("| 1 | bf16 | bf16 | (itself) | finished |"), std::string::npos) << report;
  EXPECT_NE(report.find("| 4 | bf16-seed2 | bf16 | (itself) | started |"), std::string::npos)
      << report;
  EXPECT_NE(report.find("| 5 | fp8-seed2 | fp8-mlp tensorwise | bf16-seed2 | waiting |"),
            std::string::npos)
      << report;
  // Three arms left at the longest finished arm's 125 s.
  EXPECT_NE(report.find("3 arms to train: about 6m15s at 2m05s an arm"), std::string::npos)
      << report;
  std::filesystem::remove_all(out);
}

TEST(StudyPlan, RejectsBadConfigsNamingTheProblem) {
  auto c = valid_config();
  c["arms"][1]["policy"] = "fp4";
  expect_rejected(c, "unknown policy 'fp4'");
  c = valid_config();
  c["arms"][1]["name"] = "bf16";
  expect_rejected(c, "appears twice");
  c = valid_config();
  c["control"] = "fp8-mlp";
  expect_rejected(c, "must be plain bf16");
  c = valid_config();
  c["control"] = "nope";
  expect_rejected(c, "'nope' is not an arm");
  c = valid_config();
  c["train_args"].push_back("--policy");
  expect_rejected(c, "must not set --policy");
  c = valid_config();
  c["arms"][0]["name"] = "../x";
  expect_rejected(c, "plain directory name");
  c = valid_config();
  c["arms"].erase(1);
  c["arms"].erase(1);
  expect_rejected(c, "at least two arms");
  // A value of the wrong type is named with the key and the type wanted, not left to nlohmann.
  c = valid_config();
  c["arms"][2]["mlp_recompute"] = "yes";
  expect_rejected(c, "arm 'bf16-recompute': \"mlp_recompute\" must be a boolean, got \"yes\"");
  c = valid_config();
  c["arms"][1]["recipe"] = 3;
  expect_rejected(c, "arm 'fp8-mlp': \"recipe\" must be a string, got 3");
  c = valid_config();
  c["control"] = nlohmann::json::array({"bf16"});
  expect_rejected(c, "study config: \"control\" must be a string");
}

TEST(StudyPlan, ScoresAreNamedAndCarryTheirOwnEvalArgs) {
  auto c = valid_config();
  c["scores"] = nlohmann::json::parse(
      R"([{"name": "val_id", "eval_args": ["--split", "val_id"]}, {"name": "more-batches",
          "eval_args": ["--max-batches", "64"]}])");
  const StudyPlan plan = parse_study_plan(c);
  ASSERT_EQ(plan.scores.size(), 2u);
  EXPECT_EQ(plan.scores[0].name, "val_id");
  EXPECT_EQ(plan.scores[1].eval_args, (std::vector<std::string>{"--max-batches", "64"}));
  c["scores"][1]["name"] = "val_id";
  expect_rejected(c, "score 'val_id' is named twice");
  c["scores"][1]["name"] = "Bad/Name";
  expect_rejected(c, "score name 'Bad/Name'");
  c["scores"][1] = {{"name", "empty"}};
  expect_rejected(c, "score 'empty' has no eval_args");
  c["scores"] = "val_id";
  expect_rejected(c, "'scores' must be an array");
}

// Every study config shipped in configs/ parses (the README's and scripts/gpu-session's commands
// name them; a broken one would only show on the GPU machine).
TEST(StudyPlan, ShippedConfigsParse) {
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FP8LAB_SOURCE_DIR "/configs")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("study-", 0) != 0 || entry.path().extension() != ".json") continue;
    ++seen;
    std::ifstream in(entry.path());
    const StudyPlan plan = parse_study_plan(nlohmann::json::parse(in));
    EXPECT_GE(plan.arms.size(), 2u) << name;
    for (const StudyArm& arm : plan.arms)
      EXPECT_EQ(study_reference(plan, arm).policy, "bf16") << name << ": " << arm.name;
  }
  EXPECT_GE(seen, 4) << "configs/study-*.json";
}

}  // namespace
}  // namespace fp8lab
