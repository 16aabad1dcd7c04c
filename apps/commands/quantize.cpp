// `fp8lab quantize`: cast a 2-D float32 .npy to FP8 under a scaling recipe (design.md §2) and
// report what the cast did. It is also how outside tools check fp8lab's numerics: the bytes
// it writes are exactly those the trainer's casts produce.
#include "command_registry.hpp"
#include "commands/json_output.hpp"
#include "fp8lab/fp8_grouped.hpp"
#include "fp8lab/fp8_scaling.hpp"
#include "fp8lab/npy.hpp"
#include "fp8lab/output_dir.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace fp8lab::cli {
namespace {

struct QuantizeOptions {
  std::string format = "e4m3";
  std::string recipe = "tensorwise", operand = "x";
  std::string in_path, out_path, out_transposed_path, out_scales_path;
  JsonOutput json;
};

struct QuantizeReport {
  Fp8Scale scale;
  CastCounts counts;
  std::optional<double> sqnr_db;         // none when the error or the signal is exactly zero
  std::optional<double> relative_error;  // none when the input is all zeros
};

// SQNR and relative error of the dequantized values (exact decode times inv_scale) against x.
void measure_error(const TensorView& x, const TensorView& q, float inv_scale, QuantizeReport& r) {
  HostTensor back(DType::f32, x.shape);
  dequantize_cpu(q, inv_scale, back);
  const float* xv = x.as<const float>();
  const float* bv = back.as<const float>();
  double signal = 0, noise = 0;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const double d = static_cast<double>(xv[i]) - bv[i];
    signal += static_cast<double>(xv[i]) * xv[i];
    noise += d * d;
  }
  if (signal > 0) r.relative_error = std::sqrt(noise / signal);
  if (signal > 0 && noise > 0) r.sqnr_db = 10.0 * std::log10(signal / noise);
}

std::string optional_text(const std::optional<double>& v, const char* none) {
  return v ? fmt::format("{:.6g}", *v) : std::string(none);
}

void print_text(const QuantizeOptions& o, const TensorView& x, const QuantizeReport& r) {
  std::printf("fp8lab quantize: %s %s -> %s (tensorwise current scaling)\n", o.in_path.c_str(),
              x.shape.str().c_str(), o.format.c_str());
  std::printf("  amax            %.9g\n", r.scale.amax);
  std::printf("  scale           %.9g   (= fmax / amax in fp32)\n", r.scale.scale);
  std::printf("  inv_scale       %.9g\n", r.scale.inv_scale);
  std::printf("  saturated       %lld\n", static_cast<long long>(r.counts.saturated));
  std::printf("  underflow       %lld   (non-zero inputs cast to +-0)\n",
              static_cast<long long>(r.counts.underflow));
  const char* no_noise = r.relative_error ? "inf (exact)" : "n/a (all zeros)";
  std::printf("  sqnr_db         %s\n", optional_text(r.sqnr_db, no_noise).c_str());
  std::printf("  relative_error  %s   (||x - dequant(q)||_F / ||x||_F)\n",
              optional_text(r.relative_error, "n/a (all zeros)").c_str());
  if (!o.out_path.empty()) std::printf("  wrote %s (uint8 codes)\n", o.out_path.c_str());
  if (!o.out_transposed_path.empty())
    std::printf("  wrote %s (uint8 codes, transposed)\n", o.out_transposed_path.c_str());
}

nlohmann::json report_json(const QuantizeOptions& o, const TensorView& x, const QuantizeReport& r) {
  auto optional_json = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  // Floats go out as doubles: fp32 -> fp64 is exact and the JSON text round-trips the double.
  nlohmann::json j = {
      {"input", o.in_path},
      {"shape", {x.shape[0], x.shape[1]}},
      {"format", o.format},
      {"amax", static_cast<double>(r.scale.amax)},
      {"scale", static_cast<double>(r.scale.scale)},
      {"inv_scale", static_cast<double>(r.scale.inv_scale)},
      {"saturated", r.counts.saturated},
      {"underflow", r.counts.underflow},
      {"sqnr_db", optional_json(r.sqnr_db)},
      {"relative_error", optional_json(r.relative_error)},
      {"out", o.out_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.out_path)},
      {"out_transposed", o.out_transposed_path.empty() ? nlohmann::json(nullptr)
                                                       : nlohmann::json(o.out_transposed_path)}};
  return j;
}

// Non-finite input in a file is bad input (exit 2), not a computation that diverged (docs/cli.md).
template <typename F>
auto finite_or_bad_input(F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::non_finite) throw;
    throw Error(ErrorKind::format, e.message(), e.expression(), e.file(), e.line());
  }
}

// A grouped recipe: q with the groups of the operand's layout, qt the cast of xᵀ with its own,
// the inverse scales of q in the order the GEMM reads them (fp8lab/fp8_scale_layout.hpp).
void run_grouped(const QuantizeOptions& o, const HostTensor& x, Fp8Format format) {
  const Fp8Role role = o.operand == "w" ? Fp8Role::w : o.operand == "dy" ? Fp8Role::dy : Fp8Role::x;
  const OperandScaling sc = operand_scaling(parse_fp8_recipe(o.recipe), role);
  const ScaleLayout layout = scale_layout(sc.q, x);
  const ScaleLayout layout_t{sc.qt, x.shape()[1], x.shape()[0]};
  HostTensor q(fp8_dtype(format), x.shape()), qt(fp8_dtype(format), {x.shape()[1], x.shape()[0]});
  HostTensor inv(DType::f32, {layout.count()}), inv_t(DType::f32, {layout_t.count()});
  const GroupedCastStats st = finite_or_bad_input(
      [&] { return quantize_grouped_cpu(x, format, sc.q, q, inv, o.in_path); });
  quantize_grouped_transposed_cpu(x, format, sc.qt, qt, inv_t, o.in_path);
  HostTensor back(DType::f32, x.shape());
  dequantize_grouped_cpu(q, sc.q, inv, back);
  const float* xv = x.as<const float>();
  const float* bv = back.as<const float>();
  double signal = 0, noise = 0;
  float lo = inv.as<float>()[0], hi = lo;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    signal += static_cast<double>(xv[i]) * xv[i];
    noise += (static_cast<double>(xv[i]) - bv[i]) * (static_cast<double>(xv[i]) - bv[i]);
  }
  for (std::int64_t i = 0; i < inv.numel(); ++i) {
    lo = std::min(lo, inv.as<float>()[i]);
    hi = std::max(hi, inv.as<float>()[i]);
  }
  if (!o.out_path.empty()) write_npy(o.out_path, q);
  if (!o.out_transposed_path.empty()) write_npy(o.out_transposed_path, qt);
  if (!o.out_scales_path.empty()) write_npy(o.out_scales_path, inv);
  const std::optional<double> rel =
      signal > 0 ? std::optional<double>(std::sqrt(noise / signal)) : std::nullopt;
  const std::optional<double> sqnr = signal > 0 && noise > 0
                                         ? std::optional<double>(10 * std::log10(signal / noise))
                                         : std::nullopt;
  const auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  nlohmann::json j = {{"input", o.in_path},
                      {"shape", {x.shape()[0], x.shape()[1]}},
                      {"format", o.format},
                      {"recipe", o.recipe},
                      {"operand", o.operand},
                      {"scale_mode", scale_mode_name(sc.q)},
                      {"scale_mode_transposed", scale_mode_name(sc.qt)},
                      {"groups", st.groups},
                      {"amax", static_cast<double>(st.amax)},
                      {"inv_scale_min", static_cast<double>(lo)},
                      {"inv_scale_max", static_cast<double>(hi)},
                      {"saturated", st.counts.saturated},
                      {"underflow", st.counts.underflow},
                      {"sqnr_db", opt(sqnr)},
                      {"relative_error", opt(rel)}};
  o.json.emit(j);
  if (o.json.to_stdout) return;
  std::printf("fp8lab quantize: %s %s -> %s (%s recipe, operand %s: %s groups, transposed %s)\n",
              o.in_path.c_str(), x.shape().str().c_str(), o.format.c_str(), o.recipe.c_str(),
              o.operand.c_str(), scale_mode_name(sc.q), scale_mode_name(sc.qt));
  std::printf("  groups          %lld\n  amax            %.9g\n", static_cast<long long>(st.groups),
              st.amax);
  std::printf("  inv_scale       %.9g .. %.9g\n", lo, hi);
  std::printf("  saturated       %lld\n  underflow       %lld\n",
              static_cast<long long>(st.counts.saturated),
              static_cast<long long>(st.counts.underflow));
  std::printf("  sqnr_db         %s\n  relative_error  %s\n",
              optional_text(sqnr, "inf (exact)").c_str(), optional_text(rel, "n/a").c_str());
}

void run_quantize(const QuantizeOptions& o) {
  for (const std::string& out : {o.out_path, o.out_transposed_path, o.out_scales_path}) {
    if (!out.empty()) check_output_not_input(out, {o.in_path}, "quantize output");
  }
  o.json.check_not_input({o.in_path, o.out_path, o.out_transposed_path, o.out_scales_path});
  FP8LAB_CHECK(o.out_path.empty() || o.out_path != o.out_transposed_path,
               "--out and --out-transposed are both '{}'", o.out_path);
  const Fp8Format format = o.format == "e4m3" ? Fp8Format::e4m3 : Fp8Format::e5m2;
  const HostTensor x = read_npy_f32_2d(o.in_path);
  if (o.recipe != "tensorwise") {
    run_grouped(o, x, format);
    return;
  }
  FP8LAB_CHECK(o.out_scales_path.empty(),
               "--out-scales writes per-group scales: the tensorwise recipe has one (in the report)");
  QuantizeReport r;
  r.scale = finite_or_bad_input([&] { return current_scale_cpu(x, format, o.in_path); });
  HostTensor q(fp8_dtype(format), x.shape()), qt(fp8_dtype(format), {x.shape()[1], x.shape()[0]});
  r.counts = quantize_transpose_cpu(x, r.scale.scale, format, q, qt);
  measure_error(x, q, r.scale.inv_scale, r);
  if (!o.out_path.empty()) write_npy(o.out_path, q);
  if (!o.out_transposed_path.empty()) write_npy(o.out_transposed_path, qt);
  o.json.emit(report_json(o, x, r));
  if (!o.json.to_stdout) print_text(o, x, r);
}

void setup_quantize(CLI::App& sub) {
  auto o = std::make_shared<QuantizeOptions>();
  sub.footer(
      "The cast (docs/design.md §2): amax = max|x|; scale = fmax / amax in fp32 (fmax 448 for "
      "e4m3,\n"
      "57344 for e5m2; amax 0 gives 1); q = fp8(x * scale), round to nearest even, values\n"
      "beyond the range clamp to +-fmax, subnormals kept; inv_scale = 1 / scale.\n"
      "saturated counts elements the clamp changed; underflow counts non-zero inputs cast to +-0.\n"
      "SQNR and relative error compare x with dequant(q) = fp8_value(q) * inv_scale.\n"
      "Outputs are uint8 .npy arrays of FP8 codes: Q [rows, cols] and its transpose QT.\n"
      "Bad input (not .npy, not float32, not 2-D, truncated, NaN/inf, larger than 2 GiB, not a\n"
      "regular file) exits with code 2, an unreadable one with 3 (docs/cli.md). Outputs never\n"
      "overwrite --in.\n"
      "sqnr_db is null in JSON when the cast is exact or the input is all zeros.\n"
      "--recipe rowwise|blockwise casts with one scale per group instead (fp8lab/fp8_recipe.hpp):\n"
      "--operand picks the tensor's role (x or dy: rows, or 1x128 tiles; w: rows, or 128x128\n"
      "blocks); QT is then the cast of the transpose with its own groups, and --out-scales writes\n"
      "the inverse scales of Q (float32) in the order cuBLASLt reads them.\n"
      "Example: fp8lab quantize --recipe blockwise --operand w --in w.npy --out-scales s.npy\n"
      "Example: fp8lab quantize --format e4m3 --in x.npy --out q.npy --json\n"
      "Example: fp8lab quantize --in x.npy --json-file report.json\n");
  sub.add_option("--format", o->format,
                 "FP8 format: e4m3 (activations, weights) or e5m2 (gradients)")
      ->check(CLI::IsMember({"e4m3", "e5m2"}))
      ->capture_default_str();
  sub.add_option("--in", o->in_path, "input: a 2-D float32 ('<f4', C order) .npy file")->required();
  sub.add_option("--out", o->out_path, "write the FP8 codes [rows, cols] as a uint8 .npy");
  sub.add_option("--out-transposed", o->out_transposed_path,
                 "write the transposed FP8 codes [cols, rows] as a uint8 .npy");
  sub.add_option("--recipe", o->recipe, "scaling recipe: tensorwise, rowwise or blockwise")
      ->check(CLI::IsMember({"tensorwise", "rowwise", "blockwise"}))
      ->capture_default_str();
  sub.add_option("--operand", o->operand, "the tensor's role in its linear: x, w or dy")
      ->check(CLI::IsMember({"x", "w", "dy"}))
      ->capture_default_str();
  sub.add_option("--out-scales", o->out_scales_path,
                 "grouped recipes: write Q's inverse scales as a float32 .npy");
  o->json.add_options(sub, "the report");
  sub.callback([o] { run_quantize(*o); });
}

const CommandRegistration kRegistration{
    {"quantize", "Cast a 2-D float32 .npy to FP8 (e4m3/e5m2) and report scale, counts and error",
     setup_quantize}};

}  // namespace
}  // namespace fp8lab::cli
