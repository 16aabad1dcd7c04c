// The project's performance goals (docs/performance.md, "Goals") that `fp8lab bench model` can
// check from one run (fp8lab/bench_model.hpp): printed under the report's table and written to
// the JSON, so that a results file says against which limit its numbers were met or missed.
#include <cstdio>
#include <string>
#include <vector>

#include "bench/model_bench_peer.hpp"
#include "fp8lab/bench_model.hpp"

namespace fp8lab {
namespace {

const ModelBenchArmResult* find_arm(const ModelBenchResult& r, const std::string& name) {
  for (const auto& a : r.arms)
    if (a.arm == name) return &a;
  return nullptr;
}

ModelBenchTargetCheck check(std::string target, double value, const char* relation, double limit,
                            std::string detail) {
  const std::string rel = relation;
  const bool met = rel == "<" ? value < limit : rel == "<=" ? value <= limit : value >= limit;
  return {std::move(target), value, limit, rel, met, std::move(detail)};
}

std::string ms_pair(const char* a, double a_ms, const char* b, double b_ms) {
  char line[160];
  std::snprintf(line, sizeof line, "%s %.2f ms, %s %.2f ms", a, a_ms, b, b_ms);
  return line;
}

std::string mib_pair(const char* a, double a_mib, const char* b, double b_mib) {
  char line[160];
  std::snprintf(line, sizeof line, "%s %.0f MiB, %s %.0f MiB", a, a_mib, b, b_mib);
  return line;
}

// An arm of `family` ("bf16", "fp8-mlp", "fp8-linears") with only a scaling recipe, if any, and
// any attention family: the arms whose speed goals are stated (options such as recompute trade
// time for memory; an attention family is the same model, another kernel). Read through the
// arm-name parser, so that a new recipe or option is classed without a list here.
bool recipe_arm(const std::string& name, const std::string& family) {
  const ModelBenchArm a = parse_model_bench_arm(name);
  PrecisionConfig recipe_only;  // the family's defaults but for the recipe
  recipe_only.policy = parse_policy(family);
  recipe_only.fp8.recipe = a.precision.fp8.recipe;
  return a.precision == recipe_only && a.moments == DType::f32;
}

// The arm with the lowest step peak among those whose name is `family` or starts with
// `family` + "+" (its options: recipe, recompute, moments), or null.
const ModelBenchArmResult* leanest(const ModelBenchResult& r, const std::string& family) {
  const ModelBenchArmResult* best = nullptr;
  for (const auto& a : r.arms) {
    const bool member = a.arm == family || a.arm.rfind(family + "+", 0) == 0;
    if (member && a.step.peak_mib > 0 && (best == nullptr || a.step.peak_mib < best->step.peak_mib))
      best = &a;
  }
  return best;
}

}  // namespace

std::vector<ModelBenchTargetCheck> model_bench_targets(const ModelBenchResult& r) {
  std::vector<ModelBenchTargetCheck> out;
  const std::string& preset = r.config.preset;
  const ModelBenchArmResult* bf16 = find_arm(r, "bf16");
  if (bf16 == nullptr || bf16->step.median_ms <= 0) return out;
  const ModelBenchTiming& base = bf16->step;

  // BF16 against the PyTorch peer, at every size: speed, and the leanest BF16 arm's memory (any
  // of the memory options) against the peer's BF16.
  const nlohmann::json* peer_bf16 = bench::peer_arm(r.peer, preset, "bf16");
  const double peer_tps = peer_bf16 ? bench::peer_value(*peer_bf16, "train", "tokens_per_s") : 0;
  const double peer_ms = peer_bf16 ? bench::peer_value(*peer_bf16, "train", "median_ms") : 0;
  // The plain bf16 arm and any that differs from it only in its attention family
  // (bf16+cudnn-forward).
  for (const auto& a : r.arms) {
    if (!recipe_arm(a.arm, "bf16") || peer_tps <= 0 || a.step.tokens_per_s <= 0) continue;
    const char* ours = a.arm == "bf16" ? "ours" : a.arm.c_str();
    out.push_back(check(a.arm + " step tokens/s vs PyTorch's", a.step.tokens_per_s / peer_tps,
                        ">=", 1.10, ms_pair(ours, a.step.median_ms, "PyTorch", peer_ms)));
  }
  // Memory: the leanest arm of each family against the peer's arm of that family (FP8 arms
  // against PyTorch's FP8 arm of the same linears).
  for (const char* family : {"bf16", "fp8-mlp", "fp8-linears"}) {
    const ModelBenchArmResult* lean = leanest(r, family);
    const nlohmann::json* peer = bench::peer_arm(r.peer, preset, family);
    const double peer_peak = peer ? bench::peer_value(*peer, "train", "peak_mib") : 0;
    if (lean == nullptr || peer_peak <= 0) continue;
    out.push_back(check(std::string("leanest ") + family + " arm's peak vs PyTorch's " + family,
                        lean->step.peak_mib / peer_peak, "<=", 0.85,
                        mib_pair(lean->arm.c_str(), lean->step.peak_mib, "PyTorch", peer_peak)));
  }
  for (const auto& a : r.arms) {
    // FP8 MLP against our BF16, at gpt50m, for each recipe.
    if (recipe_arm(a.arm, "fp8-mlp") && preset == "gpt50m") {
      out.push_back(check(a.arm + " step time vs bf16's", a.step.median_ms / base.median_ms, "<",
                          1.0, ms_pair(a.arm.c_str(), a.step.median_ms, "bf16", base.median_ms)));
      if (base.peak_mib > 0)
        out.push_back(check(a.arm + " step peak vs bf16's", a.step.peak_mib / base.peak_mib, "<=",
                            0.88, mib_pair(a.arm.c_str(), a.step.peak_mib, "bf16", base.peak_mib)));
    }
    // FP8 block linears at gpt1.3b, for each recipe: against our BF16, and against PyTorch's.
    if (recipe_arm(a.arm, "fp8-linears") && preset == "gpt1.3b" && base.tokens_per_s > 0) {
      out.push_back(check(a.arm + " step tokens/s vs bf16's",
                          a.step.tokens_per_s / base.tokens_per_s, ">=", 1.25,
                          ms_pair(a.arm.c_str(), a.step.median_ms, "bf16", base.median_ms)));
      if (peer_tps > 0)
        out.push_back(check(a.arm + " step tokens/s vs PyTorch's bf16",
                            a.step.tokens_per_s / peer_tps, ">=", 1.40,
                            ms_pair(a.arm.c_str(), a.step.median_ms, "PyTorch bf16", peer_ms)));
    }
  }
  // MLP activation checkpointing against plain BF16, at every size.
  if (const ModelBenchArmResult* a = find_arm(r, "bf16+recompute")) {
    out.push_back(check("bf16+recompute step time vs bf16's", a->step.median_ms / base.median_ms,
                        "<=", 1.05,
                        ms_pair("bf16+recompute", a->step.median_ms, "bf16", base.median_ms)));
    if (base.peak_mib > 0)
      out.push_back(check("bf16+recompute step peak vs bf16's", a->step.peak_mib / base.peak_mib,
                          "<=", 0.70,
                          mib_pair("bf16+recompute", a->step.peak_mib, "bf16", base.peak_mib)));
  }
  return out;
}

}  // namespace fp8lab
