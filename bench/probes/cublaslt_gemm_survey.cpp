// How fast cuBLASLt's GEMMs can be at the model's own shapes: every algorithm configuration
// cuBLASLt accepts, timed on cold operands, against the heuristic's first pick (the one fp8lab
// runs). Written for fp8-linears ≥ 1.30× bf16 at gpt1.3b (docs/performance.md, "GEMMs"): its
// FP8 GEMMs run at 1.28 PFLOP/s in the model, and
// the question is whether any kernel cuBLASLt ships runs these shapes faster, or whether only a
// GEMM of fp8lab's own could.
//
// For each GEMM of a block's four linears (forward, dX, dW; the types, layouts and output of
// cuda_linear_layer.cpp, dW accumulating into f32) at a preset's shapes:
// - the heuristic's ranked candidates (up to kHeuristic), each timed;
// - every algorithm id × tile × stages × cluster shape that cublasLtMatmulAlgoCheck accepts
//   (phase 1), then the fastest few again with CTA swizzling, custom options and split-K
//   (phase 2).
// Each launch reads operands the previous launch did not (sets rotate, each set larger than
// L2 together with the next), so no time is an L2 hit the model would not get.
//
// The GPU's clock drifts over a survey (a first version, each candidate timed alone, timed the
// heuristic's pick 0.42 ms at the start and 0.48 ms at the end of the same case), so every
// candidate is timed beside the heuristic's pick: their launches alternate, and a candidate's
// score is the ratio of its median to the pick's median over the same stretch of time. A
// candidate whose first launch is more than kKeepRatio × the pick's is dropped after it.
//
// Operands: --data normal (default) casts standard normal values to FP8 at the scale a
// current-amax cast would use (amax to the format's max), like the model's; --data codes
// draws FP8 bytes uniformly (every exponent equally often), a different power draw.
//
// Prints one line per GEMM and, per preset, the sum over a step (every layer's GEMMs) with the
// heuristic's pick and with the fastest configuration found.
//
// --sustain S: no survey; each GEMM's heuristic pick runs back to back for S seconds after the
// GPU has rested, and the rate of every ~100 ms window is printed. The survey's launches are
// one at a time with the host in between, so the board stays cool; the model's are back to
// back. In the paired survey (bench/results/gemm/fp8-survey/), the SM clock fell from
// 1980 MHz to as low as 1215 MHz at 680 W whenever the FP8 candidates ran back to back, with
// the software power cap as the throttle reason.
//
// Build: the `cublaslt_gemm_survey` target (CUDA builds). Run on the GPU machine:
//   cublaslt_gemm_survey [--preset gpt1.3b|gpt350m|gpt50m]... [--bf16] [--fp8]
//                        [--data normal|codes] [--sustain SECONDS]
// (default: gpt1.3b and gpt50m, FP8, normal). Results: bench/results/gemm/.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::uint64_t kWorkspace = std::uint64_t{32} << 20;  // fp8lab's CublasLtGemm default
constexpr int kHeuristic = 32;
constexpr double kKeepRatio = 1.3;
constexpr int kPhase2 = 6;

#define CHECK_CUDA(x)                                                                         \
  do {                                                                                        \
    const cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)
#define CHECK_LT(x)                                                                              \
  do {                                                                                           \
    const cublasStatus_t s_ = (x);                                                               \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                           \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cublasLtGetStatusName(s_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

// out[M, N] = A · B, row-major, as fp8lab's CublasLtGemm computes it (gemm_cuda.hpp): A is
// [M, K] (a_kmajor) or stored [K, M]; B is stored [N, K] (b_kmajor) or [K, N].
struct GemmCase {
  std::string name;
  cudaDataType_t a_type, b_type, out_type;
  std::int64_t m, n, k;
  bool a_kmajor, b_kmajor, accumulate;
};

struct Preset {
  const char* name;
  std::int64_t tokens, dim, layers;
};

const Preset kPresets[] = {{"gpt50m", 64 * 2048, 512, 8},
                           {"gpt350m", 16 * 2048, 1024, 24},
                           {"gpt1.3b", 8 * 2048, 2048, 24}};

// A block's linears (qkv, attention proj, fc, MLP proj) as [out features, in features].
std::vector<GemmCase> block_gemms(const Preset& p, bool fp8) {
  const std::int64_t d = p.dim, t = p.tokens;
  struct Linear {
    const char* name;
    std::int64_t out, in;
  };
  const Linear linears[] = {
      {"qkv", 3 * d, d}, {"attn.proj", d, d}, {"fc", 4 * d, d}, {"mlp.proj", d, 4 * d}};
  const cudaDataType_t x = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
  const cudaDataType_t dy = fp8 ? CUDA_R_8F_E5M2 : CUDA_R_16BF;
  std::vector<GemmCase> cases;
  for (const Linear& l : linears) {
    const std::string n = l.name;
    // FP8 reads the cast's transposed copies, so every operand is K-major (cuda_linear_layer.cpp).
    cases.push_back({n + " fwd", x, x, CUDA_R_16BF, t, l.out, l.in, true, true, false});
    cases.push_back({n + " dX", dy, x, CUDA_R_16BF, t, l.in, l.out, true, fp8, false});
    cases.push_back({n + " dW", dy, x, CUDA_R_32F, l.out, l.in, t, fp8, fp8, true});
  }
  return cases;
}

std::size_t type_bytes(cudaDataType_t t) { return t == CUDA_R_32F ? 4 : t == CUDA_R_16BF ? 2 : 1; }

bool g_uniform_codes = false;  // --data codes

// The value of an FP8 code (finite codes only are asked for).
float fp8_value(std::uint8_t code, cudaDataType_t t) {
  const int mant_bits = t == CUDA_R_8F_E4M3 ? 3 : 2, bias = t == CUDA_R_8F_E4M3 ? 7 : 15;
  const int e = (code & 0x7F) >> mant_bits, m = code & ((1 << mant_bits) - 1);
  const float mag = e == 0 ? std::ldexp(float(m), 1 - bias - mant_bits)
                           : std::ldexp(1.f + float(m) / float(1 << mant_bits), e - bias);
  return (code & 0x80) ? -mag : mag;
}

// Standard normal values scaled so that their amax is the format's max (a current-amax cast),
// rounded to the nearest code: the model's operands, roughly.
std::vector<std::uint8_t> normal_codes(std::size_t n, cudaDataType_t t, std::mt19937& rng) {
  const int top = t == CUDA_R_8F_E4M3 ? 0x7E : 0x7B;  // the largest finite positive code
  std::vector<float> values;
  for (int c = 0; c <= top; ++c) values.push_back(fp8_value(static_cast<std::uint8_t>(c), t));
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> x(n);
  float amax = 0;
  for (float& v : x) amax = std::max(amax, std::fabs(v = normal(rng)));
  const float scale = values.back() / amax;
  std::vector<std::uint8_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float a = std::fabs(x[i]) * scale;
    auto it = std::lower_bound(values.begin(), values.end(), a);
    if (it == values.end()) it = values.end() - 1;
    if (it != values.begin() && a - *(it - 1) < *it - a) --it;
    out[i] = static_cast<std::uint8_t>((it - values.begin()) | (x[i] < 0 ? 0x80 : 0));
  }
  return out;
}

// Random values of the type: FP8 as normal_codes (or uniform bytes with NaN/inf patterns
// nudged, --data codes), bf16 normal values of unit scale. Operands only: never f32.
void fill_random(void* device, std::size_t elems, cudaDataType_t t, unsigned seed) {
  std::mt19937 rng(seed);
  const std::size_t bytes = elems * type_bytes(t);
  std::vector<std::uint8_t> host(bytes);
  if ((t == CUDA_R_8F_E4M3 || t == CUDA_R_8F_E5M2) && !g_uniform_codes) {
    // A pool of 16 Mi codes repeated: the host's rounding of every element would take longer
    // than the survey.
    const std::vector<std::uint8_t> pool =
        normal_codes(std::min<std::size_t>(elems, 1 << 24), t, rng);
    for (std::size_t i = 0; i < bytes; i += pool.size())
      std::memcpy(&host[i], pool.data(), std::min(pool.size(), bytes - i));
  } else if (t == CUDA_R_8F_E4M3 || t == CUDA_R_8F_E5M2) {
    for (auto& b : host) {
      b = static_cast<std::uint8_t>(rng());
      if (t == CUDA_R_8F_E4M3 && (b & 0x7F) == 0x7F) b ^= 1;            // S.1111.111 is NaN
      if (t == CUDA_R_8F_E5M2 && ((b >> 2) & 0x1F) == 0x1F) b ^= 0x40;  // exponent 11111
    }
  } else {
    std::normal_distribution<float> normal(0.f, 1.f);
    for (std::size_t i = 0; i < bytes; i += 2) {
      const float v = normal(rng);
      std::uint32_t u;
      std::memcpy(&u, &v, 4);
      const std::uint16_t h = static_cast<std::uint16_t>(u >> 16);
      std::memcpy(&host[i], &h, 2);
    }
  }
  CHECK_CUDA(cudaMemcpy(device, host.data(), bytes, cudaMemcpyHostToDevice));
}

struct OperandSet {
  void *a = nullptr, *b = nullptr, *out = nullptr;
};

struct Config {
  int id = -1;
  std::uint32_t tile = 0, stages = 0, swizzle = 0, custom = 0, reduction = 0;
  std::uint16_t cluster = 0;
  std::int32_t split_k = 1;
};

std::string describe(const Config& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "id %d tile %u stages %u cluster %u swizzle %u custom %u splitk %d"
                " red %u",
                c.id, c.tile, c.stages, c.cluster, c.swizzle, c.custom, c.split_k, c.reduction);
  return buf;
}

Config read_config(const cublasLtMatmulAlgo_t& algo) {
  Config c;
  std::size_t w = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &c.id, sizeof c.id, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &c.tile, sizeof c.tile,
                                       &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &c.stages,
                                       sizeof c.stages, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &c.cluster,
                                       sizeof c.cluster, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &c.swizzle,
                                       sizeof c.swizzle, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &c.custom,
                                       sizeof c.custom, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &c.split_k,
                                       sizeof c.split_k, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &c.reduction,
                                       sizeof c.reduction, &w);
  return c;
}

double median(std::vector<float> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

template <typename T>
bool set_config(cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr, T v) {
  return cublasLtMatmulAlgoConfigSetAttribute(&algo, attr, &v, sizeof v) == CUBLAS_STATUS_SUCCESS;
}

template <typename T>
std::vector<T> cap_list(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t a) {
  std::size_t need = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, a, nullptr, 0, &need) != CUBLAS_STATUS_SUCCESS ||
      need == 0)
    return {};
  std::vector<T> v(need / sizeof(T));
  std::size_t w = 0;
  cublasLtMatmulAlgoCapGetAttribute(&algo, a, v.data(), need, &w);
  v.resize(w / sizeof(T));
  return v;
}

template <typename T>
T cap_value(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t a) {
  T v{};
  std::size_t w = 0;
  cublasLtMatmulAlgoCapGetAttribute(&algo, a, &v, sizeof v, &w);
  return v;
}

class Survey {
 public:
  Survey(cublasLtHandle_t handle, const GemmCase& c) : h_(handle), c_(c) {
    CHECK_LT(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t op_a = c.b_kmajor ? CUBLAS_OP_T : CUBLAS_OP_N;  // Lt's A = our B
    const cublasOperation_t op_b = c.a_kmajor ? CUBLAS_OP_N : CUBLAS_OP_T;  // Lt's B = our A
    set_desc(CUBLASLT_MATMUL_DESC_TRANSA, op_a);
    set_desc(CUBLASLT_MATMUL_DESC_TRANSB, op_b);
    const bool fp8 = c.a_type != CUDA_R_16BF;
    if (fp8) set_desc(CUBLASLT_MATMUL_DESC_FAST_ACCUM, static_cast<std::int8_t>(0));  // precise
    // Stored shapes, row-major: B is [N, K] or [K, N]; A is [M, K] or [K, M].
    const std::int64_t b_rows = c.b_kmajor ? c.n : c.k, b_cols = c.b_kmajor ? c.k : c.n;
    const std::int64_t a_rows = c.a_kmajor ? c.m : c.k, a_cols = c.a_kmajor ? c.k : c.m;
    CHECK_LT(cublasLtMatrixLayoutCreate(&la_, c.b_type, b_cols, b_rows, b_cols));
    CHECK_LT(cublasLtMatrixLayoutCreate(&lb_, c.a_type, a_cols, a_rows, a_cols));
    CHECK_LT(cublasLtMatrixLayoutCreate(&lc_, c.out_type, c.n, c.m, c.n));
    CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&scales_), 64));
    const float ones[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    CHECK_CUDA(cudaMemcpy(scales_, ones, sizeof ones, cudaMemcpyHostToDevice));
    if (fp8) {
      set_desc(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const float*>(scales_));
      set_desc(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const float*>(scales_ + 4));
    }
    CHECK_CUDA(cudaMalloc(&workspace_, kWorkspace));
    // Enough operand sets that one set plus the next exceeds L2 (60 MB) twice over.
    const std::size_t a_bytes = static_cast<std::size_t>(c.m * c.k) * type_bytes(c.a_type);
    const std::size_t b_bytes = static_cast<std::size_t>(c.n * c.k) * type_bytes(c.b_type);
    const std::size_t o_bytes = static_cast<std::size_t>(c.m * c.n) * type_bytes(c.out_type);
    const std::size_t set_bytes = a_bytes + b_bytes + o_bytes;
    const int sets =
        static_cast<int>(std::clamp<std::size_t>((std::size_t{240} << 20) / set_bytes + 1, 2, 8));
    for (int s = 0; s < sets; ++s) {
      OperandSet o;
      CHECK_CUDA(cudaMalloc(&o.a, a_bytes));
      CHECK_CUDA(cudaMalloc(&o.b, b_bytes));
      CHECK_CUDA(cudaMalloc(&o.out, o_bytes));
      fill_random(o.a, static_cast<std::size_t>(c.m * c.k), c.a_type, 11u + s);
      fill_random(o.b, static_cast<std::size_t>(c.n * c.k), c.b_type, 101u + s);
      CHECK_CUDA(cudaMemset(o.out, 0, o_bytes));
      sets_.push_back(o);
    }
    CHECK_CUDA(cudaStreamCreate(&stream_));
    CHECK_CUDA(cudaEventCreate(&start_));
    CHECK_CUDA(cudaEventCreate(&stop_));
  }
  ~Survey() {
    for (OperandSet& o : sets_) {
      cudaFree(o.a);
      cudaFree(o.b);
      cudaFree(o.out);
    }
    cudaFree(workspace_);
    cudaFree(scales_);
    cublasLtMatrixLayoutDestroy(lc_);
    cublasLtMatrixLayoutDestroy(lb_);
    cublasLtMatrixLayoutDestroy(la_);
    cublasLtMatmulDescDestroy(desc_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
  }

  double tflop() const { return 2.0 * double(c_.m) * double(c_.n) * double(c_.k) * 1e-12; }

  std::vector<cublasLtMatmulAlgo_t> heuristic() {
    cublasLtMatmulPreference_t pref = nullptr;
    CHECK_LT(cublasLtMatmulPreferenceCreate(&pref));
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                         &kWorkspace, sizeof kWorkspace);
    cublasLtMatmulHeuristicResult_t results[kHeuristic] = {};
    int found = 0;
    cublasLtMatmulAlgoGetHeuristic(h_, desc_, la_, lb_, lc_, lc_, pref, kHeuristic, results,
                                   &found);
    cublasLtMatmulPreferenceDestroy(pref);
    std::vector<cublasLtMatmulAlgo_t> out;
    for (int i = 0; i < found; ++i) out.push_back(results[i].algo);
    return out;
  }

  // Phase 1: every id × tile × stages × cluster shape that AlgoCheck accepts.
  std::vector<cublasLtMatmulAlgo_t> exhaustive(int* checked) {
    int ids[512];
    int n_ids = 0;
    // Lt's A is our B, Lt's B is our A.
    CHECK_LT(cublasLtMatmulAlgoGetIds(h_, CUBLAS_COMPUTE_32F, CUDA_R_32F, c_.b_type, c_.a_type,
                                      c_.out_type, c_.out_type, 512, ids, &n_ids));
    const std::uint16_t clusters[] = {CUBLASLT_CLUSTER_SHAPE_AUTO,  CUBLASLT_CLUSTER_SHAPE_1x1x1,
                                      CUBLASLT_CLUSTER_SHAPE_2x1x1, CUBLASLT_CLUSTER_SHAPE_1x2x1,
                                      CUBLASLT_CLUSTER_SHAPE_2x2x1, CUBLASLT_CLUSTER_SHAPE_4x1x1,
                                      CUBLASLT_CLUSTER_SHAPE_1x4x1};
    std::vector<cublasLtMatmulAlgo_t> out;
    for (int i = 0; i < n_ids; ++i) {
      cublasLtMatmulAlgo_t base;
      if (cublasLtMatmulAlgoInit(h_, CUBLAS_COMPUTE_32F, CUDA_R_32F, c_.b_type, c_.a_type,
                                 c_.out_type, c_.out_type, ids[i], &base) != CUBLAS_STATUS_SUCCESS)
        continue;
      std::vector<std::uint32_t> tiles = cap_list<std::uint32_t>(base, CUBLASLT_ALGO_CAP_TILE_IDS);
      std::vector<std::uint32_t> stages =
          cap_list<std::uint32_t>(base, CUBLASLT_ALGO_CAP_STAGES_IDS);
      if (tiles.empty()) tiles.push_back(CUBLASLT_MATMUL_TILE_UNDEFINED);
      if (stages.empty()) stages.push_back(CUBLASLT_MATMUL_STAGES_UNDEFINED);
      for (std::uint32_t tile : tiles)
        for (std::uint32_t st : stages)
          for (std::uint16_t cl : clusters) {
            cublasLtMatmulAlgo_t algo = base;
            set_config(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, tile);
            set_config(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, st);
            if (!set_config(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, cl)) continue;
            ++*checked;
            if (accepted(algo)) out.push_back(algo);
          }
    }
    return out;
  }

  // Phase 2: variations of one accepted configuration.
  std::vector<cublasLtMatmulAlgo_t> variations(const cublasLtMatmulAlgo_t& base) {
    std::vector<cublasLtMatmulAlgo_t> out;
    const bool swizzle = cap_value<std::int32_t>(base, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT);
    const bool split = cap_value<std::int32_t>(base, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT);
    const std::uint32_t reductions =
        cap_value<std::uint32_t>(base, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK);
    const std::int32_t custom_max =
        cap_value<std::int32_t>(base, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX);
    for (std::uint32_t sw = 0; sw <= (swizzle ? 1u : 0u); ++sw)
      for (std::int32_t cu = 0; cu <= std::min(custom_max, 7); ++cu)
        for (std::int32_t sk : {1, 2, 3, 4}) {
          if (sk > 1 && !split) continue;
          for (std::uint32_t red : {0u, 1u, 2u, 4u}) {
            if ((sk == 1) != (red == 0)) continue;
            if (red != 0 && !(reductions & red)) continue;
            if (sw == 0 && cu == 0 && sk == 1) continue;  // phase 1 had it
            cublasLtMatmulAlgo_t algo = base;
            set_config(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, sw);
            set_config(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, static_cast<std::uint32_t>(cu));
            set_config(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, sk);
            set_config(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, red);
            if (accepted(algo)) out.push_back(algo);
          }
        }
    return out;
  }

  // A candidate against the reference (the heuristic's pick), launches alternating: the ratio of
  // the candidate's median to the reference's over the same stretch of time, and both medians.
  // After the first pair, a candidate slower than kKeepRatio × the reference is scored on that
  // pair alone. `pairs` = 0: the first pair only. Ratio < 0: the candidate's launch was refused.
  struct Score {
    double ratio = -1, ms = 0, ref_ms = 0;
  };
  Score score(const cublasLtMatmulAlgo_t& ref, const cublasLtMatmulAlgo_t& cand, int pairs) {
    float r = 0, c = 0;
    Score out;
    if (!launch_timed(ref, &r)) return out;
    if (!launch_timed(cand, &c)) return out;
    out = {double(c) / double(r), c, r};
    if (pairs == 0 || out.ratio > kKeepRatio) return out;
    std::vector<float> rs, cs;
    for (int i = 0; i < pairs; ++i) {
      if (!launch_timed(ref, &r) || !launch_timed(cand, &c)) return Score{};
      rs.push_back(r);
      cs.push_back(c);
    }
    out.ref_ms = median(rs);
    out.ms = median(cs);
    out.ratio = out.ms / out.ref_ms;
    return out;
  }

  // `algo` launched back to back for `seconds` (no host sync inside a window of ~kWindowMs): the
  // PF/s of each window, in order. Shows what the GEMM sustains once the board reaches its
  // power limit, which the survey's one-launch-at-a-time timing does not.
  std::vector<double> sustain(const cublasLtMatmulAlgo_t& algo, double seconds) {
    constexpr double kWindowMs = 100;
    // The window's launch count from the median of three launches (a first launch can be slow).
    std::vector<float> first(3);
    for (float& t : first)
      if (!launch_timed(algo, &t)) return {};
    float ms = static_cast<float>(median(first));
    const int per_window = std::max(1, static_cast<int>(kWindowMs / ms));
    std::vector<double> pfs;
    double elapsed = 0;
    while (elapsed < seconds * 1e3) {
      CHECK_CUDA(cudaEventRecord(start_, stream_));
      for (int i = 0; i < per_window; ++i) CHECK_LT(launch(algo));
      CHECK_CUDA(cudaEventRecord(stop_, stream_));
      CHECK_CUDA(cudaEventSynchronize(stop_));
      CHECK_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
      elapsed += ms;
      pfs.push_back(tflop() * per_window / ms);
    }
    return pfs;
  }

 private:
  template <typename T>
  void set_desc(cublasLtMatmulDescAttributes_t attr, const T& v) {
    CHECK_LT(cublasLtMatmulDescSetAttribute(desc_, attr, &v, sizeof v));
  }
  bool accepted(cublasLtMatmulAlgo_t& algo) {
    cublasLtMatmulHeuristicResult_t r{};
    return cublasLtMatmulAlgoCheck(h_, desc_, la_, lb_, lc_, lc_, &algo, &r) ==
               CUBLAS_STATUS_SUCCESS &&
           r.workspaceSize <= kWorkspace;
  }
  // One launch on the next operand set (a refused configuration returns its status).
  cublasStatus_t launch(const cublasLtMatmulAlgo_t& algo) {
    const OperandSet& o = sets_[next_++ % sets_.size()];
    const float alpha = 1.f, beta = c_.accumulate ? 1.f : 0.f;
    return cublasLtMatmul(h_, desc_, &alpha, o.b, la_, o.a, lb_, &beta, o.out, lc_, o.out, lc_,
                          &algo, workspace_, kWorkspace, stream_);
  }
  bool launch_timed(const cublasLtMatmulAlgo_t& algo, float* ms) {
    CHECK_CUDA(cudaEventRecord(start_, stream_));
    const cublasStatus_t s = launch(algo);
    CHECK_CUDA(cudaEventRecord(stop_, stream_));
    CHECK_CUDA(cudaEventSynchronize(stop_));
    if (s != CUBLAS_STATUS_SUCCESS) return false;
    CHECK_CUDA(cudaEventElapsedTime(ms, start_, stop_));
    return true;
  }

  cublasLtHandle_t h_;
  GemmCase c_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr;
  float* scales_ = nullptr;
  void* workspace_ = nullptr;
  std::vector<OperandSet> sets_;
  std::size_t next_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

struct Scored {
  double ratio;
  cublasLtMatmulAlgo_t algo;
};

struct CaseResult {
  double ref_ms = 0, best_ratio = 1, ranked_ratio = 1;
};

constexpr int kPairs = 5, kFinalPairs = 15, kFinalists = 3;

CaseResult survey_case(cublasLtHandle_t h, const GemmCase& c) {
  Survey s(h, c);
  CaseResult r;
  const std::vector<cublasLtMatmulAlgo_t> ranked = s.heuristic();
  if (ranked.empty()) {
    std::printf("%-14s: the heuristic offers nothing\n", c.name.c_str());
    return r;
  }
  const cublasLtMatmulAlgo_t& ref = ranked[0];
  // Warm the clocks on the reference before anything is kept.
  for (int i = 0; i < 10; ++i) s.score(ref, ref, 0);
  const double ref_start = s.score(ref, ref, kPairs).ref_ms;
  std::vector<Scored> scored;
  for (std::size_t i = 1; i < ranked.size(); ++i) {
    const auto sc = s.score(ref, ranked[i], kPairs);
    if (sc.ratio < 0) continue;
    scored.push_back({sc.ratio, ranked[i]});
    r.ranked_ratio = std::min(r.ranked_ratio, sc.ratio);
  }
  int checked = 0;
  const std::vector<cublasLtMatmulAlgo_t> all = s.exhaustive(&checked);
  for (const cublasLtMatmulAlgo_t& a : all) {
    const auto sc = s.score(ref, a, kPairs);
    if (sc.ratio >= 0) scored.push_back({sc.ratio, a});
  }
  const auto by_ratio = [](const Scored& x, const Scored& y) { return x.ratio < y.ratio; };
  std::sort(scored.begin(), scored.end(), by_ratio);
  int variations = 0;
  const std::size_t top = std::min<std::size_t>(kPhase2, scored.size());
  for (std::size_t i = 0; i < top; ++i) {
    for (const cublasLtMatmulAlgo_t& a : s.variations(scored[i].algo)) {
      ++variations;
      const auto sc = s.score(ref, a, kPairs);
      if (sc.ratio >= 0) scored.push_back({sc.ratio, a});
    }
  }
  std::sort(scored.begin(), scored.end(), by_ratio);
  // The finalists again, longer, so that one lucky stretch cannot pick the winner.
  std::string best_config = "the heuristic's pick";
  double ref_end = 0;
  for (std::size_t i = 0; i < std::min<std::size_t>(kFinalists, scored.size()); ++i) {
    const auto sc = s.score(ref, scored[i].algo, kFinalPairs);
    if (sc.ratio < 0) continue;
    ref_end = sc.ref_ms;
    if (sc.ratio < r.best_ratio) {
      r.best_ratio = sc.ratio;
      best_config = describe(read_config(scored[i].algo));
    }
  }
  if (ref_end == 0) ref_end = s.score(ref, ref, kFinalPairs).ref_ms;
  r.ref_ms = ref_end;
  std::printf(
      "%-14s M %6lld N %6lld K %6lld | heuristic#0 %.4f ms %.3f PF/s (%.4f at the start)"
      " | best of %zu ranked %+.1f%% | %zu configs (%d checked, %d variations): best "
      "%+.1f%% = %.3f PF/s | %s | %s\n",
      c.name.c_str(), static_cast<long long>(c.m), static_cast<long long>(c.n),
      static_cast<long long>(c.k), r.ref_ms, s.tflop() / r.ref_ms, ref_start, ranked.size() - 1,
      100.0 * (r.ranked_ratio - 1.0), all.size(), checked, variations, 100.0 * (r.best_ratio - 1.0),
      s.tflop() / (r.ref_ms * r.best_ratio), describe(read_config(ref)).c_str(),
      best_config.c_str());
  std::fflush(stdout);
  return r;
}

// --sustain: each GEMM's heuristic pick for `seconds`, after a rest of kRestS with the GPU idle.
constexpr double kRestS = 2.0;
double sustain_case(cublasLtHandle_t h, const GemmCase& c, double seconds) {
  Survey s(h, c);
  const std::vector<cublasLtMatmulAlgo_t> ranked = s.heuristic();
  if (ranked.empty()) return 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(kRestS * 1e3)));
  const auto t0 = std::chrono::system_clock::now().time_since_epoch();
  const std::vector<double> pfs = s.sustain(ranked[0], seconds);
  if (pfs.empty()) return 0;
  // The last second's windows (or the last half, if shorter).
  const std::size_t tail = std::max<std::size_t>(1, std::min<std::size_t>(10, pfs.size() / 2));
  std::vector<float> last(pfs.end() - static_cast<std::ptrdiff_t>(tail), pfs.end());
  const double sustained = median(last);
  std::printf(
      "%-14s M %6lld N %6lld K %6lld | first 100 ms %.3f PF/s | lowest window %.3f | "
      "last %zu windows %.3f PF/s (%+.1f%% from the first) | start %.1f s |",
      c.name.c_str(), static_cast<long long>(c.m), static_cast<long long>(c.n),
      static_cast<long long>(c.k), pfs.front(), *std::min_element(pfs.begin(), pfs.end()), tail,
      sustained, 100.0 * (sustained / pfs.front() - 1.0),
      std::chrono::duration<double>(t0).count());
  for (double v : pfs) std::printf(" %.2f", v);
  std::printf("\n");
  std::fflush(stdout);
  return sustained;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> presets;
  bool bf16 = false, fp8 = false;
  double sustain_s = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--preset" && i + 1 < argc) {
      presets.push_back(argv[++i]);
    } else if (a == "--bf16") {
      bf16 = true;
    } else if (a == "--fp8") {
      fp8 = true;
    } else if (a == "--sustain" && i + 1 < argc && std::atof(argv[i + 1]) > 0) {
      sustain_s = std::atof(argv[++i]);
    } else if (a == "--data" && i + 1 < argc &&
               (std::string(argv[i + 1]) == "normal" || std::string(argv[i + 1]) == "codes")) {
      g_uniform_codes = std::string(argv[++i]) == "codes";
    } else {
      std::fprintf(stderr,
                   "usage: cublaslt_gemm_survey [--preset gpt1.3b|gpt350m|gpt50m]... [--fp8] "
                   "[--bf16] [--data normal|codes] [--sustain SECONDS]\n(got '%s')\n",
                   a.c_str());
      return 2;
    }
  }
  if (presets.empty()) presets = {"gpt1.3b", "gpt50m"};
  if (!bf16 && !fp8) fp8 = true;
  int version = 0;
  cublasLtHandle_t h = nullptr;
  CHECK_LT(cublasLtCreate(&h));
  version = static_cast<int>(cublasLtGetVersion());
  std::printf(
      "cuBLASLt %d; workspace %llu MiB; %d pairs per candidate, %d per finalist; keep "
      "ratio %.2f; FP8 data %s\n",
      version, static_cast<unsigned long long>(kWorkspace >> 20), kPairs, kFinalPairs, kKeepRatio,
      g_uniform_codes ? "uniform codes" : "normal, amax-scaled");
  for (const std::string& name : presets) {
    const Preset* p = nullptr;
    for (const Preset& q : kPresets)
      if (name == q.name) p = &q;
    if (!p) {
      std::fprintf(stderr, "unknown preset '%s' (expected gpt50m, gpt350m or gpt1.3b)\n",
                   name.c_str());
      return 2;
    }
    for (int pass = 0; pass < 2; ++pass) {
      const bool is_fp8 = pass == 0;
      if ((is_fp8 && !fp8) || (!is_fp8 && !bf16)) continue;
      std::printf("\n== %s %s: tokens %lld, d %lld, %lld layers ==\n", p->name,
                  is_fp8 ? "fp8 (precise accumulation)" : "bf16", static_cast<long long>(p->tokens),
                  static_cast<long long>(p->dim), static_cast<long long>(p->layers));
      if (sustain_s > 0) {
        double sum_ms = 0;
        for (const GemmCase& c : block_gemms(*p, is_fp8)) {
          const double pfs = sustain_case(h, c, sustain_s);
          if (pfs > 0) sum_ms += 2e-12 * double(c.m) * double(c.n) * double(c.k) / pfs;
        }
        std::printf("%s %s step (%lld layers) at the sustained rates: %.2f ms\n", p->name,
                    is_fp8 ? "fp8" : "bf16", static_cast<long long>(p->layers),
                    sum_ms * double(p->layers));
        continue;
      }
      double heuristic = 0, best = 0;
      for (const GemmCase& c : block_gemms(*p, is_fp8)) {
        const CaseResult r = survey_case(h, c);
        heuristic += r.ref_ms;
        best += r.ref_ms * r.best_ratio;
      }
      std::printf(
          "%s %s step (%lld layers): heuristic %.2f ms, best found %.2f ms (%+.2f ms, "
          "%+.1f%%)\n",
          p->name, is_fp8 ? "fp8" : "bf16", static_cast<long long>(p->layers),
          heuristic * double(p->layers), best * double(p->layers),
          (best - heuristic) * double(p->layers), 100.0 * (best / heuristic - 1.0));
    }
  }
  cublasLtDestroy(h);
  return 0;
}
