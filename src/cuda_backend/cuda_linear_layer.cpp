// The CUDA linear layer (see fp8lab/linear_cuda.hpp). Every GEMM is K-major where FP8 needs it:
//   forward  y[M,N]  = Xq[M,K]   · Wq[N,K]ᵀ
//   dgrad    dX[M,K] = dYq[M,N]  · (Wqᵀ[K,N])ᵀ
//   wgrad    dW[N,K] = dYqᵀ[N,M] · (Xqᵀ[K,M])ᵀ
#if defined(FP8LAB_HAVE_CUDA)
#include "core/cuda_check.hpp"
#include "core/cuda_memory.hpp"
#include "cuda_kernels/cuda_ops_launch.hpp"
#include "fp8/fp8_grouped_cuda.hpp"
#include "fp8lab/linear_cuda.hpp"
#include "gemm/gemm_cuda.hpp"

namespace fp8lab {
namespace {

constexpr int kMetaX = 0, kMetaW = 1, kMetaDy = 2;

bool is_fp8_mode(LinearCudaMode mode) { return mode != LinearCudaMode::bf16; }

void check_view(const TensorView& t, DType dtype, const Shape& shape, const std::string& what) {
  check_device(t, Device::cuda, what.c_str());
  check_dtype(t, dtype, what.c_str());
  check_shape(t, shape, what.c_str());
}

// amax + cast + transpose (plain) or amax + cast-transpose (fused): the same bytes either way.
// With work.given (a meta the producer of x filled) there is no amax pass: the cast takes the
// scale from there and copies it into `meta` (whose counters the caller zeroed).
void cast_both_layouts(LinearCudaMode mode, const TensorView& x, Fp8Format format, Fp8Meta* meta,
                       const TensorView& q, const TensorView& qt, cudaStream_t stream,
                       const CastMetaWork& work) {
  if (!work.given) amax_scale_cuda(x, format, meta, stream);
  if (mode == LinearCudaMode::fp8_fused) {
    quantize_transpose_cuda(x, format, meta, q, qt, stream, work);
  } else {
    quantize_cuda(x, format, meta, q, stream, work);
    transpose_fp8_cuda(q, qt, stream);
  }
}

// The side work of the cast of operand `which` (kMetaX, kMetaW, kMetaDy).
CastMetaWork cast_work(const LinearCudaConfig& config, int which, AmaxSlot given) {
  return {.given = given.meta,
          .given_deferred = given.deferred,
          .first_nonfinite = config.first_nonfinite,
          .nonfinite_id = config.nonfinite_ids[static_cast<std::size_t>(which)]};
}

void check_saved(const LinearSavedCuda& s, std::int64_t m, std::int64_t k, std::int64_t n,
                 const std::string& name) {
  check_view(s.xq, DType::e4m3, {m, k}, name + " saved xq");
  if (!s.fp8.bf16_wgrad) check_view(s.xq_t, DType::e4m3, {k, m}, name + " saved xq_t");
  check_view(s.wq, DType::e4m3, {n, k}, name + " saved wq");
  check_view(s.wq_t, DType::e4m3, {k, n}, name + " saved wq_t");
  FP8LAB_CHECK(s.meta != nullptr, "{}: saved state has no Fp8Meta", name);
}

struct ForwardDims {
  std::int64_t m, k, n;
};

// The forward's x [M, K] and W [N, K] (bf16).
ForwardDims check_forward_inputs(const TensorView& x, const TensorView& w,
                                 const std::string& name) {
  check_rank(x, 2, (name + ".x").c_str());
  check_rank(w, 2, (name + ".w").c_str());
  const ForwardDims d{x.shape[0], x.shape[1], w.shape[0]};
  check_view(x, DType::bf16, {d.m, d.k}, name + ".x");
  check_view(w, DType::bf16, {d.n, d.k}, name + ".w (W is [N, K], K = x's columns)");
  return d;
}

// The backward's dY [M, N] and dX [M, K] (bf16) and dW [N, K] (f32 or bf16).
void check_backward_views(const TensorView& dy, const TensorView& dx, const TensorView& dw,
                          std::int64_t m, std::int64_t k, std::int64_t n, const std::string& name) {
  check_view(dy, DType::bf16, {m, n}, name + ".dy");
  check_view(dx, DType::bf16, {m, k}, name + ".dx");
  check_device(dw, Device::cuda, (name + ".dw").c_str());
  check_shape(dw, {n, k}, (name + ".dw").c_str());
  FP8LAB_CHECK_KIND(ErrorKind::dtype, dw.dtype == DType::f32 || dw.dtype == DType::bf16,
                    "{}.dw must be f32 or bf16, got {}", name, dw.describe());
}

// The weight-gradient GEMM's options: a bf16 dW (PrecisionConfig::grads) is rounded once per
// call, its split-K parts (if any) summed in fp32 (GemmCudaOptions::round_once).
GemmCudaOptions wgrad_options(const TensorView& dw, bool accumulate) {
  return {.accumulate = accumulate, .round_once = dw.dtype == DType::bf16};
}

// Tells the caller's phase hook (LinearCudaConfig::phase) that the phase `label` starts.
void announce(const LinearCudaConfig& config, const char* label) {
  if (config.phase) config.phase(label);
}

bool grouped(const Fp8Options& fp8) { return fp8.recipe != Fp8Recipe::tensorwise; }

// A grouped cast of operand `which` (kMetaX, kMetaW, kMetaDy) into both layouts (qt may be
// empty: no transposed cast).
void cast_grouped(const LinearCudaConfig& config, const TensorView& t, Fp8Role role,
                  const GroupedCastCuda& out, Fp8Meta* meta, int which, cudaStream_t stream) {
  quantize_grouped_cuda(t, fp8_role_format(role), operand_scaling(config.fp8.recipe, role), out,
                        meta, stream, config.first_nonfinite,
                        config.nonfinite_ids[static_cast<std::size_t>(which)]);
}

// A GEMM operand of the FP8 modes: codes with their scales (per group, or the meta's one).
GemmArg fp8_arg(const TensorView& q, const TensorView& inv, ScaleMode mode, const Fp8Meta* meta) {
  if (mode == ScaleMode::tensor) return {q, true, &meta->inv_scale};
  return {q, true, inv.as<const float>(), mode};
}

// The tensorwise casts without a transposed layout (under bf16_wgrad x's and dY's are unused).
void cast_one_layout(const TensorView& t, Fp8Format format, Fp8Meta* meta, const TensorView& q,
                     cudaStream_t stream, const CastMetaWork& work) {
  if (!work.given) amax_scale_cuda(t, format, meta, stream);
  quantize_cuda(t, format, meta, q, stream, work);
}

}  // namespace

LinearCudaOverlap::LinearCudaOverlap() {
  FP8LAB_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  FP8LAB_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  FP8LAB_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
}

LinearCudaOverlap::~LinearCudaOverlap() {
  cudaEventDestroy(join);
  cudaEventDestroy(fork);
  cudaStreamDestroy(side);
}

const char* linear_cuda_mode_name(LinearCudaMode mode) {
  switch (mode) {
    case LinearCudaMode::bf16:
      return "bf16";
    case LinearCudaMode::fp8_plain:
      return "fp8-plain";
    case LinearCudaMode::fp8_fused:
      return "fp8-fused";
  }
  return "?";
}

LinearCudaMode parse_linear_cuda_mode(std::string_view name) {
  for (LinearCudaMode m :
       {LinearCudaMode::bf16, LinearCudaMode::fp8_plain, LinearCudaMode::fp8_fused})
    if (name == linear_cuda_mode_name(m)) return m;
  FP8LAB_FAIL(ErrorKind::invalid_argument,
              "unknown linear mode '{}' (expected bf16, fp8-plain or fp8-fused)", name);
}

LinearPrecision linear_cuda_precision(LinearCudaMode mode) {
  return is_fp8_mode(mode) ? LinearPrecision::fp8 : LinearPrecision::bf16;
}

LinearFp8Sizes linear_fp8_sizes(const Fp8Options& fp8, std::int64_t m, std::int64_t k,
                                std::int64_t n) {
  const OperandScaling xs = operand_scaling(fp8.recipe, Fp8Role::x);
  const OperandScaling ws = operand_scaling(fp8.recipe, Fp8Role::w);
  const OperandScaling ds = operand_scaling(fp8.recipe, Fp8Role::dy);
  const auto count = [](ScaleMode mode, std::int64_t rows, std::int64_t cols) -> std::int64_t {
    return mode == ScaleMode::tensor ? 0 : ScaleLayout{mode, rows, cols}.count();
  };
  const bool t = !fp8.bf16_wgrad;  // the transposed x and dY exist for an FP8 wgrad only
  return {m * k,
          t ? k * m : 0,
          n * k,
          k * n,
          count(xs.q, m, k),
          t ? count(xs.qt, k, m) : 0,
          count(ws.q, n, k),
          count(ws.qt, k, n),
          m * n,
          t ? n * m : 0,
          count(ds.q, m, n),
          t ? count(ds.qt, n, m) : 0};
}

LinearSavedCuda alloc_linear_saved_cuda(DeviceArena& arena, LinearCudaMode mode, std::int64_t m,
                                        std::int64_t k, std::int64_t n, cudaStream_t stream,
                                        const Fp8Options& fp8) {
  LinearSavedCuda s;
  s.mode = mode;
  s.fp8 = fp8;
  if (!is_fp8_mode(mode)) return s;
  const LinearFp8Sizes z = linear_fp8_sizes(fp8, m, k, n);
  const auto f32 = [&](std::int64_t count, const char* name) {
    return count == 0 ? TensorView{} : arena.tensor(DType::f32, {count}, name);
  };
  s.xq = arena.tensor(DType::e4m3, {m, k}, "linear saved xq");
  if (z.xq_t) s.xq_t = arena.tensor(DType::e4m3, {k, m}, "linear saved xq_t");
  s.wq = arena.tensor(DType::e4m3, {n, k}, "linear saved wq");
  s.wq_t = arena.tensor(DType::e4m3, {k, n}, "linear saved wq_t");
  s.xq_inv = f32(z.xq_inv, "linear saved xq scales");
  s.xq_t_inv = f32(z.xq_t_inv, "linear saved xq_t scales");
  s.wq_inv = f32(z.wq_inv, "linear saved wq scales");
  s.wq_t_inv = f32(z.wq_t_inv, "linear saved wq_t scales");
  s.meta = alloc_fp8_meta(arena, 3, stream);
  return s;
}

LinearScratch alloc_linear_scratch_cuda(DeviceArena& arena, LinearCudaMode mode, std::int64_t m,
                                        std::int64_t n, const Fp8Options& fp8) {
  LinearScratch s;
  if (!is_fp8_mode(mode)) return s;
  const LinearFp8Sizes z = linear_fp8_sizes(fp8, m, 1, n);
  s.dyq = arena.tensor(DType::e5m2, {m, n}, "linear scratch dyq");
  if (z.dyq_t) s.dyq_t = arena.tensor(DType::e5m2, {n, m}, "linear scratch dyq_t");
  if (z.dyq_inv) s.dyq_inv = arena.tensor(DType::f32, {z.dyq_inv}, "linear scratch dyq scales");
  if (z.dyq_t_inv)
    s.dyq_t_inv = arena.tensor(DType::f32, {z.dyq_t_inv}, "linear scratch dyq_t scales");
  return s;
}

void linear_forward_cuda(CublasLtGemm& gemm, const LinearCudaConfig& config, const TensorView& x,
                         const TensorView& w, const TensorView& y, LinearSavedCuda& saved,
                         cudaStream_t stream, AmaxSlot x_amax, AmaxSlot w_amax) {
  const std::string& name = config.name;
  const auto [m, k, n] = check_forward_inputs(x, w, name);
  const bool want_y = y.data != nullptr;  // null: only the backward's state (a recompute)
  if (want_y) check_view(y, DType::bf16, {m, n}, name + ".y");
  FP8LAB_CHECK(saved.mode == config.mode, "{}: saved state was made for mode {}, the layer runs {}",
               name, linear_cuda_mode_name(saved.mode), linear_cuda_mode_name(config.mode));
  if (!is_fp8_mode(config.mode)) {
    saved.x = x;
    saved.w = w;
    if (want_y) gemm.matmul({x, true}, {w, true}, y, {}, stream);
    return;
  }
  FP8LAB_CHECK(saved.fp8 == config.fp8,
               "{}: saved state was made for the {} recipe, the layer runs {}", name,
               fp8_recipe_name(saved.fp8.recipe), fp8_recipe_name(config.fp8.recipe));
  const bool is_grouped = grouped(config.fp8);
  if (is_grouped) {
    check_fp8_linear_dims(config.fp8, m, k, n, name);
    FP8LAB_CHECK(!x_amax && !w_amax,
                 "{}: a producer-fused amax is tensorwise, the layer runs the {} recipe", name,
                 fp8_recipe_name(config.fp8.recipe));
  }
  check_saved(saved, m, k, n, name);
  if (config.fp8.bf16_wgrad) saved.x = x;  // the BF16 wgrad's operand
  Fp8Meta* meta = saved.meta;
  LinearCudaOverlap* ov = config.overlap;
  if (ov) {  // W on the side stream, after everything already queued on the main one
    FP8LAB_CUDA_CHECK(cudaEventRecord(ov->fork, stream));
    FP8LAB_CUDA_CHECK(cudaStreamWaitEvent(ov->side, ov->fork, 0));
  }
  cudaStream_t w_stream = ov ? ov->side : stream;
  if (!ov) announce(config, "linear_forward fp8: W cast");
  if (is_grouped)
    cast_grouped(config, w, Fp8Role::w, {saved.wq, saved.wq_inv, saved.wq_t, saved.wq_t_inv},
                 meta + kMetaW, kMetaW, w_stream);
  else
    cast_both_layouts(config.mode, w, Fp8Format::e4m3, meta + kMetaW, saved.wq, saved.wq_t,
                      w_stream, cast_work(config, kMetaW, w_amax));
  if (ov) FP8LAB_CUDA_CHECK(cudaEventRecord(ov->join, ov->side));
  announce(config, "linear_forward fp8: x cast");
  if (is_grouped)
    cast_grouped(config, x, Fp8Role::x, {saved.xq, saved.xq_inv, saved.xq_t, saved.xq_t_inv},
                 meta + kMetaX, kMetaX, stream);
  else if (config.fp8.bf16_wgrad)
    cast_one_layout(x, Fp8Format::e4m3, meta + kMetaX, saved.xq, stream,
                    cast_work(config, kMetaX, x_amax));
  else
    cast_both_layouts(config.mode, x, Fp8Format::e4m3, meta + kMetaX, saved.xq, saved.xq_t, stream,
                      cast_work(config, kMetaX, x_amax));
  if (ov) {
    announce(config, "linear_forward fp8: W wait");
    FP8LAB_CUDA_CHECK(cudaStreamWaitEvent(stream, ov->join, 0));
  }
  if (!want_y) return;
  announce(config, "linear_forward fp8: GEMM");
  const OperandScaling xs = operand_scaling(config.fp8.recipe, Fp8Role::x);
  const OperandScaling ws = operand_scaling(config.fp8.recipe, Fp8Role::w);
  gemm.matmul(fp8_arg(saved.xq, saved.xq_inv, xs.q, meta + kMetaX),
              fp8_arg(saved.wq, saved.wq_inv, ws.q, meta + kMetaW), y, {}, stream);
}

void linear_backward_cuda(CublasLtGemm& gemm, const LinearCudaConfig& config,
                          const LinearSavedCuda& saved, const TensorView& dy, const TensorView& dx,
                          const TensorView& dw, const LinearScratch& scratch, bool accumulate_dw,
                          cudaStream_t stream, AmaxSlot dy_amax) {
  const std::string& name = config.name;
  FP8LAB_CHECK(saved.mode == config.mode, "{}: saved state was made for mode {}, the layer runs {}",
               name, linear_cuda_mode_name(saved.mode), linear_cuda_mode_name(config.mode));
  const bool fp8 = is_fp8_mode(config.mode);
  if (!fp8) {
    check_rank(saved.x, 2, (name + " saved x").c_str());
    check_rank(saved.w, 2, (name + " saved w").c_str());
    const std::int64_t m = saved.x.shape[0], k = saved.x.shape[1], n = saved.w.shape[0];
    check_backward_views(dy, dx, dw, m, k, n, name);
    gemm.matmul({dy, true}, {saved.w, false}, dx, {}, stream);  // dX = dY · W
    gemm.matmul({dy, false}, {saved.x, false}, dw, wgrad_options(dw, accumulate_dw),
                stream);  // dW = dYᵀ · x
    return;
  }
  FP8LAB_CHECK(saved.fp8 == config.fp8,
               "{}: saved state was made for the {} recipe, the layer runs {}", name,
               fp8_recipe_name(saved.fp8.recipe), fp8_recipe_name(config.fp8.recipe));
  // FP8: only the transposed layouts are read here (and x under bf16_wgrad), so a caller may free
  // xq and wq after the forward (the CUDA backend does: they are half of the saved bytes).
  const bool fp8_wgrad = !config.fp8.bf16_wgrad;
  const TensorView& xs = fp8_wgrad ? saved.xq_t : saved.x;  // fp8 [K, M], bf16 [M, K]
  check_rank(xs, 2, (name + " saved x").c_str());
  check_rank(saved.wq_t, 2, (name + " saved wq_t").c_str());
  const std::int64_t m = fp8_wgrad ? xs.shape[1] : xs.shape[0];
  const std::int64_t k = fp8_wgrad ? xs.shape[0] : xs.shape[1], n = saved.wq_t.shape[1];
  check_backward_views(dy, dx, dw, m, k, n, name);
  const bool stage_f32 = linear_wgrad_stages_f32(config, dw.dtype, accumulate_dw);
  if (stage_f32)
    check_view(scratch.dw_f32, DType::f32, {n, k},
               name + " scratch dw_f32 (an FP8 wgrad adding into a bf16 dW goes through it)");
  if (fp8_wgrad)
    check_view(saved.xq_t, DType::e4m3, {k, m}, name + " saved xq_t");
  else
    check_view(saved.x, DType::bf16, {m, k}, name + " saved x (bf16 wgrad)");
  check_view(saved.wq_t, DType::e4m3, {k, n}, name + " saved wq_t");
  FP8LAB_CHECK(saved.meta != nullptr, "{}: saved state has no Fp8Meta", name);
  check_view(scratch.dyq, DType::e5m2, {m, n}, name + " scratch dyq");
  if (fp8_wgrad) check_view(scratch.dyq_t, DType::e5m2, {n, m}, name + " scratch dyq_t");
  const bool is_grouped = grouped(config.fp8);
  FP8LAB_CHECK(!is_grouped || !dy_amax,
               "{}: a producer-fused amax is tensorwise, the layer runs the {} recipe", name,
               fp8_recipe_name(config.fp8.recipe));
  Fp8Meta* meta = saved.meta;
  announce(config, "linear_backward fp8: dY cast");
  if (is_grouped)
    cast_grouped(
        config, dy, Fp8Role::dy,
        {scratch.dyq, scratch.dyq_inv, fp8_wgrad ? scratch.dyq_t : TensorView{}, scratch.dyq_t_inv},
        meta + kMetaDy, kMetaDy, stream);
  else if (fp8_wgrad)
    cast_both_layouts(config.mode, dy, Fp8Format::e5m2, meta + kMetaDy, scratch.dyq, scratch.dyq_t,
                      stream, cast_work(config, kMetaDy, dy_amax));
  else
    cast_one_layout(dy, Fp8Format::e5m2, meta + kMetaDy, scratch.dyq, stream,
                    cast_work(config, kMetaDy, dy_amax));
  const OperandScaling ds = operand_scaling(config.fp8.recipe, Fp8Role::dy);
  const OperandScaling xsc = operand_scaling(config.fp8.recipe, Fp8Role::x);
  const OperandScaling ws = operand_scaling(config.fp8.recipe, Fp8Role::w);
  announce(config, "linear_backward fp8: dX GEMM");
  gemm.matmul(fp8_arg(scratch.dyq, scratch.dyq_inv, ds.q, meta + kMetaDy),
              fp8_arg(saved.wq_t, saved.wq_t_inv, ws.qt, meta + kMetaW), dx, {}, stream);
  announce(config, "linear_backward fp8: dW GEMM");
  const TensorView& dw_out = stage_f32 ? scratch.dw_f32 : dw;
  const GemmCudaOptions dw_options = wgrad_options(dw_out, accumulate_dw && !stage_f32);
  if (fp8_wgrad)
    gemm.matmul(fp8_arg(scratch.dyq_t, scratch.dyq_t_inv, ds.qt, meta + kMetaDy),
                fp8_arg(saved.xq_t, saved.xq_t_inv, xsc.qt, meta + kMetaX), dw_out, dw_options,
                stream);
  else
    gemm.matmul({dy, false}, {saved.x, false}, dw, dw_options, stream);  // dW = dYᵀ · x in BF16
  if (stage_f32) {
    announce(config, "linear_backward fp8: dW add");
    cuda_ops::add_inplace(dw.data, cuda_ops::ElemType::bf16, scratch.dw_f32.data,
                          cuda_ops::ElemType::f32, dw.numel(), stream);
    FP8LAB_LAUNCH_CHECK("add_inplace (dW f32 into bf16)");
  }
}

bool linear_wgrad_stages_f32(const LinearCudaConfig& config, DType dw_dtype, bool accumulate_dw) {
  return is_fp8_mode(config.mode) && !config.fp8.bf16_wgrad && accumulate_dw &&
         dw_dtype == DType::bf16;
}

void linear_gelu_forward_cuda(CublasLtGemm& gemm, const LinearCudaConfig& config,
                              const TensorView& x, const TensorView& w, const TensorView& pre,
                              const TensorView& y, LinearSavedCuda& saved, cudaStream_t stream) {
  const std::string& name = config.name;
  FP8LAB_CHECK(config.mode == LinearCudaMode::bf16 && saved.mode == config.mode,
               "{}: the GELU epilogue runs in bf16 mode only, not {}", name,
               linear_cuda_mode_name(config.mode));
  const auto [m, k, n] = check_forward_inputs(x, w, name);
  check_view(pre, DType::bf16, {m, n}, name + " pre-activation");
  check_view(y, DType::bf16, {m, n}, name + " GELU output");
  saved.x = x;
  saved.w = w;
  gemm.matmul({x, true}, {w, true}, y, {.epilogue = GemmEpilogue::gelu_aux, .aux = pre}, stream);
}

void linear_check_finite_cuda(const LinearCudaConfig& config, const LinearSavedCuda& saved,
                              std::int64_t step, cudaStream_t stream) {
  if (!is_fp8_mode(saved.mode)) return;
  check_fp8_meta_finite(saved.meta, {config.name + ".x", config.name + ".w", config.name + ".dy"},
                        step, stream);
}

LinearCastStatsCuda read_linear_stats_cuda(const LinearSavedCuda& saved, cudaStream_t stream) {
  FP8LAB_CHECK(is_fp8_mode(saved.mode) && saved.meta != nullptr,
               "read_linear_stats_cuda: mode {} has no cast statistics",
               linear_cuda_mode_name(saved.mode));
  const auto metas = read_fp8_meta(saved.meta, 3, stream);
  return {metas[0], metas[1], metas[2]};
}

}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
