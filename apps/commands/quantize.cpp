// `fp8lab quantize`: cast a 2-D float32 .npy to FP8 with tensorwise current scaling (design.md §2)
// and report what the cast did. It is also how outside tools check fp8lab's numerics: the bytes
// it writes are exactly those the trainer's casts produce.
#include "command_registry.hpp"
#include "fp8lab/fp8_scaling.hpp"
#include "fp8lab/npy.hpp"
#include "fp8lab/output_dir.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace fp8lab::cli {
namespace {

struct QuantizeOptions {
  std::string format = "e4m3";
  std::string in_path, out_path, out_transposed_path;
  bool json = false;
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

void print_json(const QuantizeOptions& o, const TensorView& x, const QuantizeReport& r) {
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
  std::printf("%s\n", j.dump().c_str());
}

void run_quantize(const QuantizeOptions& o) {
  for (const std::string& out : {o.out_path, o.out_transposed_path}) {
    if (!out.empty()) check_output_not_input(out, {o.in_path}, "quantize output");
  }
  FP8LAB_CHECK(o.out_path.empty() || o.out_path != o.out_transposed_path,
               "--out and --out-transposed are both '{}'", o.out_path);
  const Fp8Format format = o.format == "e4m3" ? Fp8Format::e4m3 : Fp8Format::e5m2;
  const HostTensor x = read_npy_f32_2d(o.in_path);
  QuantizeReport r;
  try {
    r.scale = current_scale_cpu(x, format, o.in_path);  // non-finite input: an error naming the file
  } catch (const Error& e) {
    // NaN/inf in a file is bad input (exit 2), not a computation that diverged (docs/cli.md).
    if (e.kind() != ErrorKind::non_finite) throw;
    throw Error(ErrorKind::format, e.message(), e.expression(), e.file(), e.line());
  }
  HostTensor q(fp8_dtype(format), x.shape()), qt(fp8_dtype(format), {x.shape()[1], x.shape()[0]});
  r.counts = quantize_transpose_cpu(x, r.scale.scale, format, q, qt);
  measure_error(x, q, r.scale.inv_scale, r);
  if (!o.out_path.empty()) write_npy(o.out_path, q);
  if (!o.out_transposed_path.empty()) write_npy(o.out_transposed_path, qt);
  if (o.json)
    print_json(o, x, r);
  else
    print_text(o, x, r);
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
      "Example: fp8lab quantize --format e4m3 --in x.npy --out q.npy --json\n");
  sub.add_option("--format", o->format,
                 "FP8 format: e4m3 (activations, weights) or e5m2 (gradients)")
      ->check(CLI::IsMember({"e4m3", "e5m2"}))
      ->capture_default_str();
  sub.add_option("--in", o->in_path, "input: a 2-D float32 ('<f4', C order) .npy file")->required();
  sub.add_option("--out", o->out_path, "write the FP8 codes [rows, cols] as a uint8 .npy");
  sub.add_option("--out-transposed", o->out_transposed_path,
                 "write the transposed FP8 codes [cols, rows] as a uint8 .npy");
  sub.add_flag("--json", o->json, "print one JSON object instead of text");
  sub.callback([o] { run_quantize(*o); });
}

const CommandRegistration kRegistration{
    {"quantize", "Cast a 2-D float32 .npy to FP8 (e4m3/e5m2) and report scale, counts and error",
     setup_quantize}};

}  // namespace
}  // namespace fp8lab::cli
