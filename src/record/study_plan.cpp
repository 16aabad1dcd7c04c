// Parsing and checking a study config (fp8lab/study.hpp).
#include "fp8lab/error.hpp"
#include "fp8lab/fp8_recipe.hpp"
#include "fp8lab/json_read.hpp"
#include "fp8lab/study.hpp"

#include <fstream>
#include <set>

namespace fp8lab {
namespace {

std::vector<std::string> string_list(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  FP8LAB_CHECK(j[key].is_array(), "study config: '{}' must be a list of strings, got {}", key,
               json_excerpt(j[key]));
  for (const auto& v : j[key]) {
    FP8LAB_CHECK(v.is_string(), "study config: '{}' must hold strings, found {}", key,
                 json_excerpt(v));
    out.push_back(v.get<std::string>());
  }
  return out;
}

const std::set<std::string> kPolicies = {"bf16", "fp8-mlp", "fp8-linears"};

StudyArm parse_arm(const nlohmann::json& a) {
  FP8LAB_CHECK(a.is_object() && a.contains("name") && a["name"].is_string() &&
                   a.contains("policy") && a["policy"].is_string(),
               "study config: each arm needs a string 'name' and 'policy', got {}",
               json_excerpt(a));
  StudyArm arm;
  arm.name = a["name"].get<std::string>();
  arm.policy = a["policy"].get<std::string>();
  FP8LAB_CHECK(kPolicies.count(arm.policy), "study config: arm '{}' has unknown policy '{}' "
               "(expected bf16, fp8-mlp or fp8-linears)", arm.name, arm.policy);
  FP8LAB_CHECK(!arm.name.empty() && arm.name.find_first_of("/\\ ") == std::string::npos &&
                   arm.name[0] != '.',
               "study config: arm name '{}' must be a plain directory name", arm.name);
  const std::string what = fmt::format("study config: arm '{}'", arm.name);
  arm.mlp_recompute = json_value_or(a, "mlp_recompute", false, what);
  arm.resource_only = json_value_or(a, "resource_only", false, what);
  arm.group = json_value_or(a, "group", std::string(), what);
  arm.extra_train_args = string_list(a, "train_args");
  arm.recipe = json_value_or(a, "recipe", arm.recipe, what);
  arm.fp8_wgrad = json_value_or(a, "fp8_wgrad", arm.fp8_wgrad, what);
  arm.null_arm = json_value_or(a, "null", false, what);
  arm.may_differ_in = string_list(a, "may_differ_in");
  parse_fp8_recipe(arm.recipe);  // throws naming an unknown recipe
  FP8LAB_CHECK(arm.fp8_wgrad == "fp8" || arm.fp8_wgrad == "bf16",
               "study config: arm '{}' has fp8_wgrad '{}' (expected fp8 or bf16)", arm.name,
               arm.fp8_wgrad);
  FP8LAB_CHECK(!arm.null_arm || (arm.policy == "bf16" && !arm.may_differ_in.empty()),
               "study config: null arm '{}' must be policy bf16 and name the keys it changes in "
               "'may_differ_in' (e.g. [\"train.loss_chunk_rows\"])",
               arm.name);
  for (const auto& key : arm.may_differ_in) {
    const auto dot = key.find('.');
    FP8LAB_CHECK(dot != std::string::npos && dot > 0 && dot + 1 < key.size() &&
                     key.find('.', dot + 1) == std::string::npos && key.rfind("model.", 0) != 0,
                 "study config: arm '{}': may_differ_in entry '{}' must be a section.key outside "
                 "model (the matched weights and shapes)",
                 arm.name, key);
  }
  arm.variant = json_value_or(a, "variant", std::string(), what);
  if (arm.variant.empty()) {
    arm.variant = arm.policy;
    if (arm.policy != "bf16") arm.variant += " " + arm.recipe;
    if (arm.fp8_wgrad == "bf16") arm.variant += " bf16-wgrad";
    if (arm.mlp_recompute) arm.variant += " recompute";
    if (arm.null_arm) arm.variant += " null";
  }
  return arm;
}

}  // namespace

StudyPlan parse_study_plan(const nlohmann::json& config) {
  FP8LAB_CHECK(config.is_object(), "study config must be a JSON object");
  StudyPlan plan;
  plan.source = config;
  plan.name = json_value_or(config, "name", std::string("study"), "study config");
  FP8LAB_CHECK(config.contains("arms") && config["arms"].is_array() && config["arms"].size() >= 2,
               "study config: 'arms' must list at least two arms (a control and a candidate)");
  std::set<std::string> names;
  for (const auto& a : config["arms"]) {
    StudyArm arm = parse_arm(a);
    FP8LAB_CHECK(names.insert(arm.name).second, "study config: arm name '{}' appears twice", arm.name);
    plan.arms.push_back(std::move(arm));
  }
  plan.control = json_value_or(config, "control", plan.arms.front().name, "study config");
  FP8LAB_CHECK(names.count(plan.control), "study config: control '{}' is not an arm", plan.control);
  for (const auto& arm : plan.arms) {
    if (arm.name == plan.control) {
      FP8LAB_CHECK(arm.policy == "bf16" && !arm.mlp_recompute,
                   "study config: the control arm '{}' must be plain bf16 (got policy {}{})", arm.name,
                   arm.policy, arm.mlp_recompute ? " with MLP recompute" : "");
    }
  }
  // Every group needs its own reference arm.
  for (const auto& arm : plan.arms) study_reference(plan, arm);
  plan.train_args = string_list(config, "train_args");
  plan.eval_args = string_list(config, "eval_args");
  plan.resource_check_args = string_list(config, "resource_check_args");
  if (config.contains("scores")) {
    FP8LAB_CHECK(config.at("scores").is_array(), "study config: 'scores' must be an array of "
                 "{{\"name\": ..., \"eval_args\": [...]}}");
    for (const auto& sc : config.at("scores")) {
      FP8LAB_CHECK(sc.is_object() && sc.contains("name") && sc.at("name").is_string(),
                   "study config: each score needs a \"name\" (got {})", json_excerpt(sc, 120));
      StudyScore score{sc.at("name").get<std::string>(), string_list(sc, "eval_args")};
      FP8LAB_CHECK(!score.name.empty() &&
                       score.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") ==
                           std::string::npos,
                   "study config: score name '{}' must be lower-case letters, digits, _ or -",
                   score.name);
      FP8LAB_CHECK(!score.eval_args.empty(), "study config: score '{}' has no eval_args",
                   score.name);
      for (const auto& other : plan.scores)
        FP8LAB_CHECK(other.name != score.name, "study config: score '{}' is named twice",
                     score.name);
      plan.scores.push_back(std::move(score));
    }
  }
  for (const auto& arg : plan.resource_check_args) {
    FP8LAB_CHECK(arg != "--arms" && arg != "--json" && arg != "--json-file",
                 "study config: resource_check_args must not set {} (the study sets it)", arg);
  }
  for (const auto& arg : plan.train_args) {
    FP8LAB_CHECK(arg != "--policy" && arg != "--out" && arg != "--mlp-recompute" &&
                     arg.find("precision.fp8_") == std::string::npos,
                 "study config: train_args must not set {} (the study sets it per arm)", arg);
  }
  return plan;
}

std::vector<std::string> study_arm_precision_args(const StudyArm& arm) {
  std::vector<std::string> args;
  if (arm.recipe != "tensorwise") args.insert(args.end(), {"--set", "precision.fp8_recipe=" + arm.recipe});
  if (arm.fp8_wgrad != "fp8") args.insert(args.end(), {"--set", "precision.fp8_wgrad=" + arm.fp8_wgrad});
  return args;
}

std::string study_arm_bench_name(const StudyArm& arm) {
  std::string name = arm.policy;
  if (arm.policy != "bf16" && arm.recipe != "tensorwise") name += "+" + arm.recipe;
  if (arm.policy != "bf16" && arm.fp8_wgrad == "bf16") name += "+bf16-wgrad";
  if (arm.mlp_recompute) name += "+recompute";
  return name;
}

const StudyArm& study_reference(const StudyPlan& plan, const StudyArm& arm) {
  const StudyArm* control = nullptr;
  for (const auto& a : plan.arms) {
    if (a.name == plan.control) control = &a;
  }
  FP8LAB_CHECK(control != nullptr, "study config: control '{}' is not an arm", plan.control);
  if (arm.group == control->group) return *control;
  for (const auto& a : plan.arms) {
    if (a.group == arm.group && a.policy == "bf16" && !a.mlp_recompute && !a.null_arm &&
        a.may_differ_in.empty())
      return a;
  }
  FP8LAB_FAIL(ErrorKind::invalid_argument, "study config: group '{}' (arm '{}') has no plain bf16 arm to "
              "serve as its reference", arm.group, arm.name);
}

std::filesystem::path study_arm_dir(const std::filesystem::path& out, const StudyArm& arm) {
  return out / "arms" / arm.name;
}

bool study_arm_finished(const std::filesystem::path& out, const StudyArm& arm) {
  return std::filesystem::exists(study_arm_dir(out, arm) / "DONE");
}

StudyPlan load_study_plan(const std::filesystem::path& file) {
  return parse_study_plan(read_json_file(file));
}

}  // namespace fp8lab
