// `fp8lab bench linear`: JSON, the printed report, and the PyTorch peer's numbers.
#if defined(FP8LAB_HAVE_CUDA)
#include <cmath>
#include <sstream>

#include "fp8lab/bench_linear.hpp"
#include "fp8lab/json_read.hpp"

namespace fp8lab {
namespace {

nlohmann::json optional_ms(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string mode_key(LinearCudaMode m) {
  std::string s = linear_cuda_mode_name(m);
  for (char& ch : s)
    if (ch == '-') ch = '_';
  return s + "_ms";  // bf16_ms, fp8_plain_ms, fp8_fused_ms
}

nlohmann::json shape_json(const LinearBenchShapeResult& r, std::int64_t tokens) {
  nlohmann::json j;
  j["in"] = r.shape.in;
  j["out"] = r.shape.out;
  j["tokens"] = tokens;
  for (const auto& [mode, ms] : r.median_ms) j[mode_key(mode)] = ms;
  for (const auto& [mode, ms] : r.spread_ms) j["spread_p10_p90_" + mode_key(mode)] = ms;
  for (const auto& [mode, bytes] : r.peak_transient_bytes)
    j["peak_transient_bytes"][linear_cuda_mode_name(mode)] = bytes;
  j["limit_ms"] = r.limit_ms;
  j["limit_cast_ms"] = r.cast_ms;
  j["limit_cast_bytes"] = r.cast_bytes;
  const double fused = r.mode_ms(LinearCudaMode::fp8_fused);
  j["fused_over_limit"] =
      r.limit_ms > 0 ? nlohmann::json(fused / r.limit_ms) : nlohmann::json(nullptr);
  j["fused_equals_plain"] = r.fused_equals_plain;
  j["fused_plain_mismatched_bytes"] = r.fused_plain_mismatched_bytes;
  j["peer_torch_bf16_ms"] = optional_ms(r.peer_bf16_ms);
  j["peer_torch_fp8_ms"] = optional_ms(r.peer_fp8_ms);
  for (const GemmBench& g : r.gemms) {
    j["gemms"][g.name] = {{"bf16_ms", g.bf16_ms},
                          {"fp8_precise_ms", g.fp8_precise_ms},
                          {"fp8_fast_ms", g.fp8_fast_ms},
                          {"err_precise_vs_f64", g.err_precise},
                          {"err_fast_vs_f64", g.err_fast}};
  }
  for (const CastKernelBench& ck : r.casts)
    j["cast_kernels_dy"][ck.name] = {
        {"ms", ck.ms}, {"bytes", ck.bytes}, {"gbps", ck.bytes / (ck.ms * 1e-3) / 1e9}};
  for (const RecipeBench& rb : r.recipes)
    j["recipes"][fp8_recipe_name(rb.recipe)] = {
        {"fused_ms", rb.median_ms},
        {"spread_p10_p90_ms", rb.spread_ms},
        {"gemm_ms", {{"fwd", rb.gemm_ms[0]}, {"dgrad", rb.gemm_ms[1]}, {"wgrad", rb.gemm_ms[2]}}},
        {"limit_ms", rb.limit_ms},
        {"limit_cast_ms", rb.cast_ms},
        {"limit_cast_bytes", rb.cast_bytes},
        {"fused_over_limit", rb.limit_ms > 0 ? rb.median_ms / rb.limit_ms : 0.0},
        {"peak_transient_bytes", rb.peak_transient_bytes}};
  return j;
}

std::string ratio(double num, double den) {
  if (!(num > 0) || !(den > 0)) return "n/a";
  return fmt::format("{:.2f}", num / den);
}

}  // namespace

nlohmann::json linear_bench_json(const LinearBenchResult& result) {
  nlohmann::json j;
  j["benchmark"] = "linear";
  j["device"] = result.device;
  j["commit"] = result.config.commit;
  j["copy_bandwidth_gbps"] = result.copy_gbps;
  j["hw_fp8_conversion"] = result.hw_conversion;
  j["peer_version"] = result.peer_version;
  j["config"] = {{"tokens", result.config.tokens},
                 {"warmup", result.config.warmup},
                 {"repeats", result.config.repeats},
                 {"rotations", result.config.rotations},
                 {"seed", result.config.seed},
                 {"w_overlap", result.config.w_overlap},
                 {"statistic", "median"}};
  j["shapes"] = nlohmann::json::array();
  for (const auto& r : result.shapes) j["shapes"].push_back(shape_json(r, result.config.tokens));
  return j;
}

std::string linear_bench_report(const LinearBenchResult& result) {
  std::ostringstream o;
  const LinearBenchConfig& c = result.config;
  o << fmt::format(
      "bench linear on {}: {} tokens, median of {} repeats ({} rotating inputs), "
      "copy {:.0f} GB/s, peer {}\n",
      result.device, c.tokens, c.repeats, c.rotations, result.copy_gbps,
      result.peer_version.empty() ? "not run" : result.peer_version);
  o << fmt::format("{:>10} {:>8} {:>9} {:>9} {:>8} {:>11} {:>10} {:>9} {:>12} {:>11} {:>6}\n",
                   "I->O", "bf16", "fp8-plain", "fp8-fused", "limit", "fused/limit", "torch-bf16",
                   "torch-fp8", "fused/t-bf16", "t-fp8/fused", "equal");
  for (const auto& r : result.shapes) {
    const double fused = r.mode_ms(LinearCudaMode::fp8_fused);
    o << fmt::format(
        "{:>10} {:>8.3f} {:>9.3f} {:>9.3f} {:>8.3f} {:>11} {:>10} {:>9} {:>12} {:>11} {:>6}\n",
        fmt::format("{}->{}", r.shape.in, r.shape.out), r.mode_ms(LinearCudaMode::bf16),
        r.mode_ms(LinearCudaMode::fp8_plain), fused, r.limit_ms, ratio(fused, r.limit_ms),
        r.peer_bf16_ms ? fmt::format("{:.3f}", *r.peer_bf16_ms) : "n/a",
        r.peer_fp8_ms ? fmt::format("{:.3f}", *r.peer_fp8_ms) : "n/a",
        ratio(fused, r.peer_bf16_ms.value_or(0)), ratio(r.peer_fp8_ms.value_or(0), fused),
        r.fused_equals_plain ? "yes" : "NO");
  }
  o << "\nGEMMs alone (ms) and error vs float64 (sampled rows), peak transient MiB per mode\n";
  for (const auto& r : result.shapes) {
    o << fmt::format("{}->{}:", r.shape.in, r.shape.out);
    for (const GemmBench& g : r.gemms)
      o << fmt::format("  {} bf16 {:.3f} fp8 {:.3f} (err {:.1e}) fast {:.3f} (err {:.1e});", g.name,
                       g.bf16_ms, g.fp8_precise_ms, g.err_precise, g.fp8_fast_ms, g.err_fast);
    o << "\n   peak:";
    for (const auto& [mode, bytes] : r.peak_transient_bytes)
      o << fmt::format(" {} {:.1f}", linear_cuda_mode_name(mode),
                       static_cast<double>(bytes) / (1 << 20));
    o << ";  cast kernels on dY (GB/s):";
    for (const CastKernelBench& ck : r.casts)
      o << fmt::format(" {} {:.3f} ms {:.0f}", ck.name, ck.ms, ck.bytes / (ck.ms * 1e-3) / 1e9);
    o << fmt::format("; limit = fp8 GEMMs {:.3f} + casts {:.3f} ({:.0f} MB)\n",
                     r.limit_ms - r.cast_ms, r.cast_ms, r.cast_bytes / 1e6);
  }
  bool any_recipe = false;
  for (const auto& r : result.shapes) any_recipe = any_recipe || !r.recipes.empty();
  if (any_recipe) {
    o << "\nScaling recipes, fused (ms): fwd+bwd, its own limit (its GEMMs alone + its casts at "
         "copy bandwidth), and against tensorwise fused and bf16\n";
    o << fmt::format("{:>10} {:>11} {:>9} {:>8} {:>11} {:>24} {:>13} {:>9}\n", "I->O", "recipe",
                     "fwd+bwd", "limit", "fused/limit", "GEMMs fwd/dgrad/wgrad", "/tensorwise",
                     "/bf16");
    for (const auto& r : result.shapes)
      for (const RecipeBench& rb : r.recipes)
        o << fmt::format("{:>10} {:>11} {:>9.3f} {:>8.3f} {:>11} {:>24} {:>13} {:>9}\n",
                         fmt::format("{}->{}", r.shape.in, r.shape.out), fp8_recipe_name(rb.recipe),
                         rb.median_ms, rb.limit_ms, ratio(rb.median_ms, rb.limit_ms),
                         fmt::format("{:.3f}/{:.3f}/{:.3f}", rb.gemm_ms[0], rb.gemm_ms[1],
                                     rb.gemm_ms[2]),
                         ratio(rb.median_ms, r.mode_ms(LinearCudaMode::fp8_fused)),
                         ratio(rb.median_ms, r.mode_ms(LinearCudaMode::bf16)));
  }
  return o.str();
}

void attach_linear_peer(LinearBenchResult& result, const nlohmann::json& j,
                        const std::string& path) {
  FP8LAB_CHECK_KIND(ErrorKind::format, j.is_object(), "peer results '{}' are not a JSON object",
                    path);
  result.peer_version =
      json_value_or(j, "torch_version", std::string("torch ?"), "peer results " + path);
  for (auto& r : result.shapes) {
    for (const auto& s : j.at("shapes")) {
      if (s.at("in").get<std::int64_t>() != r.shape.in ||
          s.at("out").get<std::int64_t>() != r.shape.out)
        continue;
      if (s.contains("torch_bf16_ms") && s["torch_bf16_ms"].is_number())
        r.peer_bf16_ms = s["torch_bf16_ms"].get<double>();
      if (s.contains("torch_fp8_ms") && s["torch_fp8_ms"].is_number())
        r.peer_fp8_ms = s["torch_fp8_ms"].get<double>();
    }
  }
}

}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
