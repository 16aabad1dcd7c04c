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

}  // namespace

std::vector<ModelBenchTargetCheck> model_bench_targets(const ModelBenchResult& r) {
  std::vector<ModelBenchTargetCheck> out;
  const std::string& preset = r.config.preset;
  const ModelBenchArmResult* bf16 = find_arm(r, "bf16");
  if (bf16 == nullptr || bf16->step.median_ms <= 0) return out;
  const ModelBenchTiming& base = bf16->step;

  // BF16 against the PyTorch peer, at every size.
  if (const nlohmann::json* p = bench::peer_arm(r.peer, preset, "bf16")) {
    const double peer_ms = bench::peer_value(*p, "train", "median_ms");
    const double peer_tps = bench::peer_value(*p, "train", "tokens_per_s");
    const double peer_peak = bench::peer_value(*p, "train", "peak_mib");
    if (peer_tps > 0 && base.tokens_per_s > 0)
      out.push_back(check("bf16 step tokens/s vs PyTorch's", base.tokens_per_s / peer_tps, ">=",
                          1.25, ms_pair("ours", base.median_ms, "PyTorch", peer_ms)));
    if (peer_peak > 0 && base.peak_mib > 0)
      out.push_back(check("bf16 step peak vs PyTorch's", base.peak_mib / peer_peak, "<=", 0.65,
                          mib_pair("ours", base.peak_mib, "PyTorch", peer_peak)));
  }
  // FP8 MLP against our BF16, at gpt50m.
  if (const ModelBenchArmResult* a = find_arm(r, "fp8-mlp"); a != nullptr && preset == "gpt50m") {
    out.push_back(check("fp8-mlp step time vs bf16's", a->step.median_ms / base.median_ms, "<",
                        1.0, ms_pair("fp8-mlp", a->step.median_ms, "bf16", base.median_ms)));
    if (base.peak_mib > 0)
      out.push_back(check("fp8-mlp step peak vs bf16's", a->step.peak_mib / base.peak_mib, "<=",
                          0.88, mib_pair("fp8-mlp", a->step.peak_mib, "bf16", base.peak_mib)));
  }
  // FP8 block linears against our BF16, at gpt1.3b.
  if (const ModelBenchArmResult* a = find_arm(r, "fp8-linears");
      a != nullptr && preset == "gpt1.3b" && base.tokens_per_s > 0) {
    out.push_back(check("fp8-linears step tokens/s vs bf16's",
                        a->step.tokens_per_s / base.tokens_per_s, ">=", 1.30,
                        ms_pair("fp8-linears", a->step.median_ms, "bf16", base.median_ms)));
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
