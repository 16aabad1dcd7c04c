// `fp8lab bench linear`: the isolated linear layer on the GPU, forward + backward with every
// conversion included, in the modes bf16 / fp8-plain / fp8-fused, against the limit measured in
// the same run (FP8 GEMM time + minimal cast traffic over measured copy bandwidth) and against the
// PyTorch peer (bench/peers/linear_peer.py, run in the same device call, read from its JSON).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fp8lab/linear_cuda.hpp"

namespace fp8lab {

struct LinearBenchShape {
  std::int64_t in = 0, out = 0;  // K -> N
};

struct LinearBenchConfig {
  std::int64_t tokens = 131072;  // M
  std::vector<LinearBenchShape> shapes = {{512, 512}, {512, 2048}, {2048, 512}, {512, 8192}};
  std::vector<LinearCudaMode> modes = {LinearCudaMode::bf16, LinearCudaMode::fp8_plain,
                                       LinearCudaMode::fp8_fused};
  int warmup = 5;
  int repeats = 30;   // timed repeats per mode; the median is reported (>= 20 enforced)
  int rotations = 3;  // input buffers cycled through, so L2 never holds the next input
  std::uint64_t seed = 0;
  bool w_overlap = true;  // fp8 modes cast W on a side stream (LinearCudaOverlap)
  // Recipes besides tensorwise (fp8-fused) timed the same way, each against its own limit.
  std::vector<Fp8Recipe> recipes = {Fp8Recipe::rowwise, Fp8Recipe::blockwise};
  std::string peer_json;  // optional: the peer's results
  std::string commit;     // recorded in the JSON
};

// One GEMM of the layer (fwd, dgrad or wgrad), alone.
struct GemmBench {
  std::string name;
  double bf16_ms = 0, fp8_precise_ms = 0, fp8_fast_ms = 0;
  double err_precise = 0, err_fast = 0;  // rel. Frobenius vs float64 on sampled rows
};

// The cast kernels alone on dY [M, N] (the largest cast of the layer), with achieved bandwidth.
struct CastKernelBench {
  std::string name;
  double ms = 0;
  double bytes = 0;  // minimal bytes the kernel must move
};

// One grouped recipe of the fused FP8 linear: fwd+bwd, and its limit = its three GEMMs alone
// (grouped scales, precise) + its minimal cast traffic at copy bandwidth: blockwise reads each
// of x, W and dY once and writes both layouts (4 bytes per element); rowwise reads them twice
// (the rows' and columns' amax first: 6 bytes per element).
struct RecipeBench {
  Fp8Recipe recipe = Fp8Recipe::tensorwise;
  double median_ms = 0, spread_ms = 0;
  double gemm_ms[3] = {0, 0, 0};  // fwd, dgrad, wgrad
  double cast_bytes = 0, cast_ms = 0, limit_ms = 0;
  std::size_t peak_transient_bytes = 0;
};

struct LinearBenchShapeResult {
  LinearBenchShape shape;
  std::vector<std::pair<LinearCudaMode, double>> median_ms;
  std::vector<std::pair<LinearCudaMode, double>> spread_ms;  // (p90 - p10) of the repeats
  std::vector<std::pair<LinearCudaMode, std::size_t>> peak_transient_bytes;
  std::vector<GemmBench> gemms;
  std::vector<CastKernelBench> casts;
  double cast_bytes = 0;            // minimal cast traffic of one fwd+bwd
  double cast_ms = 0;               // cast_bytes over the measured copy bandwidth
  double limit_ms = 0;              // FP8 precise GEMMs + cast_ms
  bool fused_equals_plain = false;  // true only if the bitwise comparison ran and held
  std::uint64_t fused_plain_mismatched_bytes = 0;
  std::optional<double> peer_bf16_ms, peer_fp8_ms;
  std::vector<RecipeBench> recipes;
  double mode_ms(LinearCudaMode m) const;  // NaN when the mode did not run
};

struct LinearBenchResult {
  std::string device;
  double copy_gbps = 0;  // device-to-device copy, bytes read + written per second / 1e9
  bool hw_conversion = false;
  std::string peer_version;
  LinearBenchConfig config;
  std::vector<LinearBenchShapeResult> shapes;
};

LinearBenchResult run_linear_bench(const LinearBenchConfig& config);
nlohmann::json linear_bench_json(const LinearBenchResult& result);
std::string linear_bench_report(const LinearBenchResult& result);  // the printed tables
// The peer's JSON (read before the bench runs, so a bad file fails first) into
// result.shapes[*].peer_* (matching in/out); throws naming `path`, the file it came from.
void attach_linear_peer(LinearBenchResult& result, const nlohmann::json& peer,
                        const std::string& path);

}  // namespace fp8lab
