// cuBLASLt GEMMs with cached plans (see src/gemm/gemm_cuda.hpp).
//
// Row-major out[M, N] = A·B is computed as the column-major product outᵀ[N, M] = Bᵀ·Aᵀ, so
// cuBLASLt's "A" is our B and its "B" is our A; a K-major operand becomes TRANSA = T / TRANSB = N,
// which is the TN layout Hopper's FP8 kernels require.
#if defined(FP8LAB_HAVE_CUDA)
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/cuda_check.hpp"
#include "fp8lab/fp8_grouped.hpp"
#include "gemm/gemm.hpp"
#include "gemm/gemm_cuda.hpp"

namespace fp8lab {

struct CublasLtGemm::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  std::vector<cublasLtMatmulAlgo_t> candidates;  // the heuristic's ranking
  int chosen = -1;  // index of the first candidate cuBLASLt accepted at run time
  bool fp8 = false;
  ~Plan() {
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

namespace {

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::bf16:
      return CUDA_R_16BF;
    case DType::f32:
      return CUDA_R_32F;
    case DType::e4m3:
      return CUDA_R_8F_E4M3;
    case DType::e5m2:
      return CUDA_R_8F_E5M2;
    default:
      FP8LAB_FAIL(ErrorKind::dtype, "no cuBLASLt type for {}", dtype_name(t));
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

struct GemmDims {
  std::int64_t m, n, k;
};

std::string describe(const GemmArg& a, const GemmArg& b, const TensorView& out) {
  const bool grouped = a.scale_mode != ScaleMode::tensor || b.scale_mode != ScaleMode::tensor;
  return fmt::format("GEMM out {} = A·B with A {}{} and B {}{}{}", out.describe(), a.t.describe(),
                     a.k_major ? " (k-major)" : " (transposed)", b.t.describe(),
                     b.k_major ? " (k-major)" : " (transposed)",
                     grouped ? fmt::format(" (scales {} x {})", scale_mode_name(a.scale_mode),
                                           scale_mode_name(b.scale_mode))
                             : std::string());
}

// cuBLASLt's scale mode for a GemmArg's ScaleMode.
cublasLtMatmulMatrixScale_t cublaslt_scale_mode(ScaleMode m) {
  switch (m) {
    case ScaleMode::row:
      return CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    case ScaleMode::vec128:
      return CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    case ScaleMode::block128:
      return CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    default:
      return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  }
}

// The epilogue's own contract (gemm_cuda.hpp): bf16 in and out, an aux of out's shape and type
// that overlaps nothing, no accumulation.
void check_epilogue(const GemmArg& a, const TensorView& out, const GemmCudaOptions& options,
                    const std::string& what) {
  if (options.epilogue == GemmEpilogue::none) return;
  const char* name = gemm_epilogue_name(options.epilogue);
  FP8LAB_CHECK_KIND(ErrorKind::dtype, a.t.dtype == DType::bf16 && out.dtype == DType::bf16,
                    "{}: the {} epilogue takes bf16 operands and a bf16 out", what, name);
  FP8LAB_CHECK(!options.accumulate, "{}: the {} epilogue cannot accumulate into out", what, name);
  const TensorView& aux = options.aux;
  FP8LAB_CHECK(aux.data != nullptr, "{}: the {} epilogue needs its aux tensor", what, name);
  FP8LAB_CHECK_KIND(ErrorKind::shape, aux.dtype == DType::bf16 && aux.shape == out.shape,
                    "{}: the {} epilogue's aux {} must be bf16 of out's shape", what, name,
                    aux.describe());
  FP8LAB_CHECK(aux.device == Device::cuda && aligned16(aux.data),
               "{}: the {} epilogue's aux {} must be a 16-byte aligned GPU pointer", what, name,
               aux.data);
  const auto* o = static_cast<const char*>(out.data);
  const auto* x = static_cast<const char*>(aux.data);
  FP8LAB_CHECK(o + out.nbytes() <= x || x + aux.nbytes() <= o,
               "{}: the {} epilogue's aux overlaps out", what, name);
}

GemmDims check_gemm(const GemmArg& a, const GemmArg& b, const TensorView& out) {
  const std::string what = describe(a, b, out);
  for (const TensorView* t : {&a.t, &b.t, &out}) {
    FP8LAB_CHECK_KIND(ErrorKind::shape, t->shape.rank() == 2, "{}: operands must be 2-D", what);
    FP8LAB_CHECK(t->device == Device::cuda, "{}: operands must be on the GPU", what);
    FP8LAB_CHECK(aligned16(t->data), "{}: pointer {} is not 16-byte aligned", what, t->data);
  }
  const GemmDims d{a.k_major ? a.t.shape[0] : a.t.shape[1], b.k_major ? b.t.shape[0] : b.t.shape[1],
                   a.k_major ? a.t.shape[1] : a.t.shape[0]};
  const std::int64_t kb = b.k_major ? b.t.shape[1] : b.t.shape[0];
  FP8LAB_CHECK_KIND(ErrorKind::shape, kb == d.k, "{}: inner dimensions differ ({} vs {})", what,
                    d.k, kb);
  FP8LAB_CHECK_KIND(ErrorKind::shape, out.shape == (Shape{d.m, d.n}), "{}: out must be [{}, {}]",
                    what, d.m, d.n);
  FP8LAB_CHECK_KIND(ErrorKind::dtype, out.dtype == DType::bf16 || out.dtype == DType::f32,
                    "{}: out must be bf16 or f32", what);
  const bool fp8 = is_fp8(a.t.dtype);
  if (!fp8) {
    FP8LAB_CHECK_KIND(ErrorKind::dtype, a.t.dtype == DType::bf16 && b.t.dtype == DType::bf16,
                      "{}: operands must both be bf16, or both fp8", what);
    FP8LAB_CHECK(a.inv_scale == nullptr && b.inv_scale == nullptr,
                 "{}: scales apply to fp8 operands only", what);
    FP8LAB_CHECK_KIND(ErrorKind::shape, d.m % 8 == 0 && d.n % 8 == 0 && d.k % 8 == 0,
                      "{}: bf16 GEMM dims M={} N={} K={} must be multiples of 8", what, d.m, d.n,
                      d.k);
    return d;
  }
  FP8LAB_CHECK_KIND(ErrorKind::dtype, is_fp8(b.t.dtype), "{}: operands must both be fp8", what);
  FP8LAB_CHECK_KIND(ErrorKind::dtype, !(a.t.dtype == DType::e5m2 && b.t.dtype == DType::e5m2),
                    "{}: e5m2 x e5m2 is not a Hopper FP8 GEMM", what);
  FP8LAB_CHECK_KIND(ErrorKind::shape, a.k_major && b.k_major,
                    "{}: FP8 operands must both be K-major (TN)", what);
  FP8LAB_CHECK_KIND(ErrorKind::shape, d.m % 16 == 0 && d.n % 16 == 0 && d.k % 16 == 0,
                    "{}: FP8 GEMM dims M={} N={} K={} must be multiples of 16", what, d.m, d.n,
                    d.k);
  FP8LAB_CHECK(a.inv_scale != nullptr && b.inv_scale != nullptr,
               "{}: FP8 operands need their inverse-scale device pointers", what);
  check_gemm_scale_modes(a.scale_mode, b.scale_mode, d.n, d.k, what);
  FP8LAB_CHECK(aligned16(a.inv_scale) && aligned16(b.inv_scale),
               "{}: inverse-scale pointers {} and {} must be 16-byte aligned (cuBLASLt refuses "
               "others)",
               what, static_cast<const void*>(a.inv_scale), static_cast<const void*>(b.inv_scale));
  return d;
}

// A bf16 out asked to round once (GemmCudaOptions::round_once): its plan keeps split-K parts in
// fp32 (see plan_for).
bool rounds_once(const TensorView& out, const GemmCudaOptions& options) {
  return out.dtype == DType::bf16 && options.round_once;
}

template <typename T>
void set_attr(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value) {
  FP8LAB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)));
}

}  // namespace

CublasLtGemm::CublasLtGemm(std::size_t workspace_bytes) : workspace_bytes_(workspace_bytes) {
  cublasLtHandle_t h = nullptr;
  FP8LAB_CUBLAS_CHECK(cublasLtCreate(&h));
  handle_ = h;
  FP8LAB_CUDA_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
}

CublasLtGemm::~CublasLtGemm() {
  plans_.clear();
  if (workspace_) cudaFree(workspace_);
  if (handle_) cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
}

const char* gemm_epilogue_name(GemmEpilogue e) {
  switch (e) {
    case GemmEpilogue::none:
      return "none";
    case GemmEpilogue::gelu_aux:
      return "gelu-aux";
  }
  return "?";
}

// The largest power of two (at most 256) that divides the address.
static std::uint32_t pointer_alignment(const void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t align = 256;
  while (align > 1 && address % align != 0) align /= 2;
  return align;
}

std::size_t CublasLtGemm::cached_plans() const { return plans_.size(); }

CublasLtGemm::Plan& CublasLtGemm::plan_for(const std::string& key, const GemmArg& a,
                                           const GemmArg& b, const TensorView& out,
                                           const GemmCudaOptions& options) {
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;
  const GemmDims d = check_gemm(a, b, out);
  auto plan = std::make_unique<Plan>();
  plan->fp8 = is_fp8(a.t.dtype);
  FP8LAB_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t op_a = b.k_major ? CUBLAS_OP_T : CUBLAS_OP_N;  // cuBLASLt A = our B
  const cublasOperation_t op_b = a.k_major ? CUBLAS_OP_N : CUBLAS_OP_T;  // cuBLASLt B = our A
  set_attr(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, op_a);
  set_attr(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, op_b);
  if (options.epilogue != GemmEpilogue::none) {
    // aux has out's layout: column-major [N, M] with leading dimension N.
    set_attr(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_GELU_AUX);
    set_attr(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, options.aux.data);
    set_attr(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, static_cast<std::int64_t>(d.n));
  }
  if (plan->fp8) {
    set_attr(plan->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
             static_cast<std::int8_t>(options.fast_accum ? 1 : 0));
    const bool grouped = a.scale_mode != ScaleMode::tensor || b.scale_mode != ScaleMode::tensor;
    FP8LAB_CHECK(!grouped || !options.fast_accum,
                 "{}: grouped FP8 scales take precise accumulation (fast_accum off)",
                 describe(a, b, out));
    if (grouped) {  // cuBLASLt's A is our B (see the top of this file)
      set_attr(plan->desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, cublaslt_scale_mode(b.scale_mode));
      set_attr(plan->desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, cublaslt_scale_mode(a.scale_mode));
    }
  }
  // Column-major layouts of the stored tensors: rows = the row-major column count.
  FP8LAB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a, cuda_type(b.t.dtype), b.t.shape[1],
                                                 b.t.shape[0], b.t.shape[1]));
  FP8LAB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->b, cuda_type(a.t.dtype), a.t.shape[1],
                                                 a.t.shape[0], a.t.shape[1]));
  FP8LAB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->c, cuda_type(out.dtype), d.n, d.m, d.n));
  cublasLtMatmulPreference_t pref = nullptr;
  FP8LAB_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const std::uint64_t ws = workspace_bytes_;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                       sizeof(ws));
  // cuBLASLt assumes 256-byte aligned pointers unless told otherwise; views into a larger
  // buffer (a chunk of rows, one parameter of the flat buffer) can be less aligned.
  const std::uint32_t align_a = pointer_alignment(b.t.data), align_b = pointer_alignment(a.t.data),
                      align_c = pointer_alignment(out.data);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_a,
                                       sizeof(align_a));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_b,
                                       sizeof(align_b));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c,
                                       sizeof(align_c));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_c,
                                       sizeof(align_c));
  if (rounds_once(out, options)) {
    // A bf16 gradient is D = bf16(fp32 product [+ float(C)]), one rounding. Split-K that adds
    // its parts in the output type (in place, or in an output-type workspace) would round each
    // part: allow only parts reduced in fp32.
    const std::uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes,
                                         sizeof(schemes));
  }
  // The scale pointers are part of the problem the heuristic sees (FP8 with f32 output was
  // refused at run time by an algorithm chosen without them).
  if (plan->fp8) {
    set_attr(plan->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, b.inv_scale);
    set_attr(plan->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, a.inv_scale);
  }
  constexpr int kCandidates = 8;
  cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(handle_), plan->desc, plan->a,
                                     plan->b, plan->c, plan->c, pref, kCandidates, results, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  FP8LAB_CHECK_KIND(ErrorKind::cuda, status == CUBLAS_STATUS_SUCCESS && found > 0,
                    "{}: cuBLASLt has no algorithm ({})", describe(a, b, out),
                    cublasLtGetStatusName(status));
  for (int i = 0; i < found; ++i) plan->candidates.push_back(results[i].algo);
  return *plans_.emplace(key, std::move(plan)).first->second;
}

void CublasLtGemm::matmul(const GemmArg& a, const GemmArg& b, const TensorView& out,
                          const GemmCudaOptions& options, cudaStream_t stream) {
  check_gemm(a, b, out);  // cheap; every call is validated, not only the first of a shape
  check_epilogue(a, out, options, describe(a, b, out));
  // beta is not part of the key (overwrite and accumulate calls share a plan); a bf16 out that
  // must round once gets a plan of its own (rounds_once).
  const std::string key = fmt::format(
      "{}{}{}s{}|{}{}{}s{}|{}{}|fa{}|ep{}|al{}.{}.{}.{}{}", dtype_name(a.t.dtype), a.t.shape.str(),
      a.k_major, static_cast<int>(a.scale_mode), dtype_name(b.t.dtype), b.t.shape.str(), b.k_major,
      static_cast<int>(b.scale_mode), dtype_name(out.dtype), out.shape.str(), options.fast_accum,
      gemm_epilogue_name(options.epilogue), pointer_alignment(a.t.data),
      pointer_alignment(b.t.data), pointer_alignment(out.data),
      options.aux.data ? pointer_alignment(options.aux.data) : 0,
      rounds_once(out, options) ? "|round-once" : "");
  Plan& plan = plan_for(key, a, b, out, options);
  if (options.epilogue != GemmEpilogue::none)
    set_attr(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, options.aux.data);
  if (plan.fp8) {
    set_attr(plan.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, b.inv_scale);
    set_attr(plan.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, a.inv_scale);
  }
  const float alpha = 1.0f, beta = options.accumulate ? 1.0f : 0.0f;
  const auto launch = [&](const cublasLtMatmulAlgo_t& algo) {
    return cublasLtMatmul(static_cast<cublasLtHandle_t>(handle_), plan.desc, &alpha, b.t.data,
                          plan.a, a.t.data, plan.b, &beta, out.data, plan.c, out.data, plan.c,
                          &algo, workspace_, workspace_bytes_, stream);
  };
  if (plan.chosen >= 0) {
    FP8LAB_CUBLAS_CHECK(launch(plan.candidates[static_cast<std::size_t>(plan.chosen)]));
    return;
  }
  // First call of this plan: take the best-ranked candidate that cuBLASLt accepts (a refused
  // launch returns before touching memory), then keep it: the algorithm is chosen once per key.
  cublasStatus_t last = CUBLAS_STATUS_NOT_SUPPORTED;
  for (std::size_t i = 0; i < plan.candidates.size(); ++i) {
    last = launch(plan.candidates[i]);
    if (last == CUBLAS_STATUS_SUCCESS) {
      plan.chosen = static_cast<int>(i);
      return;
    }
  }
  FP8LAB_FAIL(ErrorKind::cuda, "{}: none of cuBLASLt's {} candidate algorithms ran (last: {})",
              describe(a, b, out), plan.candidates.size(), cublasLtGetStatusName(last));
}

}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
