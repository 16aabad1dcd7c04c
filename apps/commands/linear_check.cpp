// `fp8lab linear-check`: the CPU reference linear layer in the bf16 and fp8 policies against an
// fp64 reference, with cast statistics and timing. The main job until the study harness exists.
#include "command_registry.hpp"
#include "commands/json_output.hpp"
#include "fp8lab/linear.hpp"
#include "fp8lab/rng.hpp"

#include <cblas.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <memory>
#include <stdexcept>
#include <vector>

namespace fp8lab::cli {
namespace {

struct CheckOptions {
  std::int64_t m = 2048, k = 512, n = 2048;
  std::uint64_t seed = 20260101;
  int repeats = 5;
  JsonOutput json;
};

// Expected relative Frobenius errors against fp64 on this data (normal x, W, dY). bf16: y and dX
// are fp32 results rounded to bf16, at most 2^-8 = 0.0039 relative per element (~0.0017 RMS), so
// 0.004 is a hard bound; dW stays fp32 (~1e-7). fp8: E4M3 operands ~2.6% RMS each, E5M2 ~5.2%
// (measured: y 0.038, dX and dW 0.059; tests/common/tolerances.hpp has the fp8-vs-bf16 values).
struct Bounds {
  double y, dx, dw;
};
constexpr Bounds kBf16Bounds{0.004, 0.004, 0.001};
constexpr Bounds kFp8Bounds{0.06, 0.09, 0.09};

struct Problem {
  HostTensor x, w, dy;                        // bf16
  std::vector<double> y_ref, dx_ref, dw_ref;  // fp64: the exact products of the bf16 values
};

HostTensor normal_bf16(Shape shape, std::uint64_t seed, const char* stream, float stddev) {
  std::vector<float> v(static_cast<std::size_t>(shape.numel()));
  fill_normal(v.data(), shape.numel(), seed, stream_id(stream), 0.0f, stddev);
  HostTensor t(DType::bf16, shape);
  for (std::size_t i = 0; i < v.size(); ++i) t.as<std::uint16_t>()[i] = float_to_bf16(v[i]);
  return t;
}

std::vector<double> widen(const HostTensor& t) {
  std::vector<double> out(static_cast<std::size_t>(t.numel()));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = bf16_to_float(t.as<std::uint16_t>()[i]);
  return out;
}

// fp64 reference through dgemm with plain (non-TN) layouts: independent of the layer's operand
// bookkeeping. fp64 products of bf16 values are exact; sums carry ~1e-16 relative error.
Problem make_problem(const CheckOptions& o) {
  Problem p;
  p.x = normal_bf16({o.m, o.k}, o.seed, "linear-check.x", 1.0f);
  p.w = normal_bf16({o.n, o.k}, o.seed, "linear-check.w", 1.0f / std::sqrt(float(o.k)));
  p.dy = normal_bf16({o.m, o.n}, o.seed, "linear-check.dy", 1e-3f);
  const std::vector<double> x = widen(p.x), w = widen(p.w), dy = widen(p.dy);
  const int m = int(o.m), k = int(o.k), n = int(o.n);
  p.y_ref.resize(std::size_t(m) * n);
  p.dx_ref.resize(std::size_t(m) * k);
  p.dw_ref.resize(std::size_t(n) * k);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0, x.data(), k, w.data(), k, 0.0,
              p.y_ref.data(), n);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, k, n, 1.0, dy.data(), n, w.data(), k,
              0.0, p.dx_ref.data(), k);
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, k, m, 1.0, dy.data(), n, x.data(), k, 0.0,
              p.dw_ref.data(), k);
  return p;
}

double relative_error(const HostTensor& got, const std::vector<double>& ref) {
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double g = got.dtype() == DType::bf16 ? bf16_to_float(got.as<std::uint16_t>()[i])
                                                : double(got.as<float>()[i]);
    diff2 += (g - ref[i]) * (g - ref[i]);
    ref2 += ref[i] * ref[i];
  }
  return std::sqrt(diff2 / ref2);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

struct PolicyResult {
  LinearPrecision policy;
  double err_y = 0, err_dx = 0, err_dw = 0;
  double forward_ms = 0, backward_ms = 0;
  LinearSaved saved;  // scales and counts (views are not used after the run)
  LinearBackwardStats backward_stats;
  bool within_bounds = false;
};

PolicyResult run_policy(const CheckOptions& o, const Problem& p, LinearPrecision policy) {
  const LinearConfig config{policy, "linear-check"};
  LinearSavedHost saved(policy, o.m, o.k, o.n);
  LinearScratchHost scratch(policy, o.m, o.n);
  HostTensor y(DType::bf16, {o.m, o.n}), dx(DType::bf16, {o.m, o.k}), dw(DType::f32, {o.n, o.k});
  PolicyResult r;
  r.policy = policy;
  std::vector<double> fwd, bwd;
  using clock = std::chrono::steady_clock;
  for (int rep = 0; rep <= o.repeats; ++rep) {  // rep 0 is a warm-up, not timed
    std::fprintf(stderr, "\r[linear-check] %-4s %s %d/%d", linear_precision_name(policy),
                 rep == 0 ? "warm-up" : "repeat ", rep, o.repeats);
    const auto t0 = clock::now();
    linear_forward_cpu(config, p.x, p.w, y, saved.saved);
    const auto t1 = clock::now();
    r.backward_stats = linear_backward_cpu(config, saved.saved, p.dy, dx, dw, scratch.scratch);
    const auto t2 = clock::now();
    if (rep > 0) {
      fwd.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      bwd.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    }
  }
  std::fprintf(stderr, "\n");
  r.forward_ms = median(fwd);
  r.backward_ms = median(bwd);
  r.err_y = relative_error(y, p.y_ref);
  r.err_dx = relative_error(dx, p.dx_ref);
  r.err_dw = relative_error(dw, p.dw_ref);
  r.saved = saved.saved;
  const Bounds b = policy == LinearPrecision::fp8 ? kFp8Bounds : kBf16Bounds;
  r.within_bounds = r.err_y < b.y && r.err_dx < b.dx && r.err_dw < b.dw;
  return r;
}

nlohmann::json cast_json(const Fp8Scale& s, const CastCounts& c, const char* format) {
  return {{"format", format},         {"amax", s.amax},           {"scale", s.scale},
          {"inv_scale", s.inv_scale}, {"saturated", c.saturated}, {"underflow", c.underflow}};
}

nlohmann::json result_json(const PolicyResult& r) {
  nlohmann::json j = {{"policy", linear_precision_name(r.policy)},
                      {"rel_error_vs_fp64", {{"y", r.err_y}, {"dx", r.err_dx}, {"dw", r.err_dw}}},
                      {"median_ms", {{"forward", r.forward_ms}, {"backward", r.backward_ms}}},
                      {"within_expected_bounds", r.within_bounds}};
  if (r.policy == LinearPrecision::fp8) {
    j["casts"] = {{"x", cast_json(r.saved.x_scale, r.saved.x_counts, "e4m3")},
                  {"w", cast_json(r.saved.w_scale, r.saved.w_counts, "e4m3")},
                  {"dy", cast_json(r.backward_stats.dy_scale, r.backward_stats.dy_counts, "e5m2")}};
  }
  return j;
}

void print_cast(const char* name, const char* format, const Fp8Scale& s, const CastCounts& c) {
  std::printf("  %-2s -> %s  amax %-10.6g scale %-10.6g saturated %lld  underflow %lld\n", name,
              format, s.amax, s.scale, static_cast<long long>(c.saturated),
              static_cast<long long>(c.underflow));
}

void run_linear_check(const CheckOptions& o) {
  FP8LAB_CHECK(o.m > 0 && o.k > 0 && o.n > 0 && o.repeats > 0,
               "linear-check needs positive --m, --k, --n and --repeats (got {}, {}, {}, {})", o.m,
               o.k, o.n, o.repeats);
  // Under --json the tables go to stderr; stdout gets only the JSON.
  std::optional<StdoutToStderr> quiet_stdout;
  quiet_stdout.emplace(o.json.to_stdout);
  std::printf(
      "fp8lab linear-check: y = x W^T, x bf16[%lld, %lld], W bf16[%lld, %lld]; seed %llu; "
      "%d threads; median of %d repeats\n",
      (long long)o.m, (long long)o.k, (long long)o.n, (long long)o.k, (unsigned long long)o.seed,
      omp_get_max_threads(), o.repeats);
  std::fprintf(stderr, "[linear-check] fp64 reference ...\n");
  const Problem p = make_problem(o);
  std::vector<PolicyResult> results;
  for (LinearPrecision policy : {LinearPrecision::bf16, LinearPrecision::fp8})
    results.push_back(run_policy(o, p, policy));

  std::printf("\nrelative Frobenius error vs fp64, and median time per call:\n");
  std::printf("  policy  %10s %10s %10s %12s %12s  %s\n", "y", "dX", "dW", "forward ms",
              "backward ms", "expected");
  for (const PolicyResult& r : results) {
    std::printf("  %-6s  %10.3e %10.3e %10.3e %12.2f %12.2f  %s\n", linear_precision_name(r.policy),
                r.err_y, r.err_dx, r.err_dw, r.forward_ms, r.backward_ms,
                r.within_bounds ? "yes" : "NO");
  }
  const PolicyResult& f8 = results.back();
  std::printf("\nfp8 casts (tensorwise current scaling):\n");
  print_cast("x", "e4m3", f8.saved.x_scale, f8.saved.x_counts);
  print_cast("W", "e4m3", f8.saved.w_scale, f8.saved.w_counts);
  print_cast("dY", "e5m2", f8.backward_stats.dy_scale, f8.backward_stats.dy_counts);

  nlohmann::json j = {{"command", "linear-check"},
                      {"shape", {{"m", o.m}, {"k", o.k}, {"n", o.n}}},
                      {"seed", o.seed},
                      {"threads", omp_get_max_threads()},
                      {"repeats", o.repeats},
                      {"results", nlohmann::json::array()}};
  for (const PolicyResult& r : results) j["results"].push_back(result_json(r));
  quiet_stdout.reset();
  o.json.emit(j);
  for (const PolicyResult& r : results) {
    if (!r.within_bounds)
      throw std::runtime_error(
          fmt::format("linear-check: the {} policy's errors exceed the "
                      "expected bounds (see the table above)",
                      linear_precision_name(r.policy)));
  }
}

void setup_linear_check(CLI::App& sub) {
  auto o = std::make_shared<CheckOptions>();
  sub.footer(
      "Runs forward and backward of the CPU reference linear layer (y = x W^T; dX = dY W;\n"
      "dW = dY^T x) in the bf16 policy and the fp8 policy (E4M3 x and W, E5M2 dY, tensorwise\n"
      "current scaling, docs/design.md §2) on seeded normal data (x ~ N(0,1), W ~ N(0,1/K),\n"
      "dY ~ N(0,1e-6)), and compares y, dX and dW with fp64 products of the same bf16 inputs.\n"
      "Prints relative Frobenius errors, median times (after one warm-up) and the fp8 casts'\n"
      "scales and saturation/underflow counts. Exits with code 1 when an error exceeds its\n"
      "expected bound (bf16: 4e-3 for y and dX, 1e-3 for dW; fp8: 0.06 for y, 0.09 for dX, dW).\n"
      "Example: fp8lab linear-check --m 256 --k 128 --n 256 --repeats 2 --json-file check.json\n");
  sub.add_option("--m", o->m, "rows of x (tokens); fp8 needs multiples of 16")
      ->capture_default_str();
  sub.add_option("--k", o->k, "input features")->capture_default_str();
  sub.add_option("--n", o->n, "output features")->capture_default_str();
  sub.add_option("--seed", o->seed, "Philox seed of the data")->capture_default_str();
  sub.add_option("--repeats", o->repeats, "timed repeats per policy")->capture_default_str();
  o->json.add_options(sub, "the numbers");
  sub.callback([o] { run_linear_check(*o); });
}

const CommandRegistration kRegistration{
    {"linear-check",
     "CPU reference linear layer, bf16 vs fp8 policy: errors vs fp64, cast counts, timing",
     setup_linear_check}};

}  // namespace
}  // namespace fp8lab::cli
