// CudaBackend: the linear layers (through the CUDA linear, fp8lab/linear_cuda.hpp) and the tied
// LM head's chunked cross-entropy.
//
// FP8 saved state: the forward's fused cast writes Xq, Xqᵀ, Wq and Wqᵀ, but the backward reads
// only Xqᵀ and Wqᵀ (and the scales). So the state lives in two pool blocks: `kept` (the
// transposed layouts and the three Fp8Metas) lives until the backward, the transients (Xq, Wq) are
// given back as soon as the forward GEMM is queued. That halves what an FP8 linear keeps
// between forward and backward: M·K bytes for its input against 2·M·K for a bf16 input.
//
// A producer-fused amax (AmaxSlot) replaces the amax pass over x or dY: the cast kernel copies
// the slot into the linear's own meta, so the metas, the non-finite flags ("<name>.x",
// "<name>.dy", set by the casts themselves) and the statistics work the same either way.
#if defined(FP8LAB_HAVE_CUDA)
#include <algorithm>
#include <optional>

#include "core/carver.hpp"
#include "core/cuda_check.hpp"
#include "cuda_backend/cuda_backend.hpp"
#include "cuda_backend/cuda_backend_internal.hpp"
#include "fp8lab/fp8_cuda.hpp"
#include "fp8lab/linear_cuda.hpp"
#include "gemm/gemm_cuda.hpp"
#include "nn/op_shapes.hpp"

namespace fp8lab::cuda {
namespace {

struct CudaLinearContext final : LinearContext {
  LinearCudaConfig config;
  LinearSavedCuda saved;
  PoolBlock kept;  // fp8: Xqᵀ, Wqᵀ, metas
};

std::size_t u(std::int64_t v) { return static_cast<std::size_t>(v); }

// For one call of the CUDA linear: while op timing is on, each phase it announces
// (LinearCudaConfig::phase) is timed as a part of the op ("linear_forward fp8: x cast"); the
// last phase ends with the call (this scope).
class PhaseTimers {
 public:
  PhaseTimers(CudaBackend& backend, LinearCudaConfig& config) : config_(config) {
    if (!backend.op_timing()) return;
    config_.phase = [this, &backend](const char* label) {
      part_.reset();
      part_.emplace(backend, label);
    };
  }
  ~PhaseTimers() {
    part_.reset();
    config_.phase = nullptr;
  }
  PhaseTimers(const PhaseTimers&) = delete;
  PhaseTimers& operator=(const PhaseTimers&) = delete;

 private:
  LinearCudaConfig& config_;
  std::optional<OpTimer> part_;
};

// A linear's state before its forward: its mode, name, recipe and the backend's W-cast overlap.
std::unique_ptr<CudaLinearContext> new_linear_context(LinearMode mode, std::string_view name,
                                                      LinearCudaOverlap* overlap,
                                                      const Fp8Options& fp8) {
  auto ctx = std::make_unique<CudaLinearContext>();
  ctx->config.mode = mode == LinearMode::fp8 ? LinearCudaMode::fp8_fused : LinearCudaMode::bf16;
  ctx->config.name = std::string(name);
  ctx->config.overlap = overlap;
  ctx->config.fp8 = fp8;
  ctx->saved.mode = ctx->config.mode;
  ctx->saved.fp8 = fp8;
  return ctx;
}

std::size_t f32_bytes(std::int64_t count) { return u(count) * sizeof(float); }

}  // namespace

std::unique_ptr<LinearContext> CudaBackend::linear_forward(LinearMode mode, const TensorView& x,
                                                           const TensorView& w, const TensorView& y,
                                                           std::string_view name, AmaxSlot x_amax,
                                                           AmaxSlot w_amax) {
  OpTimer timer(*this, mode == LinearMode::fp8 ? "linear_forward fp8" : "linear_forward bf16");
  FP8LAB_CHECK_KIND(ErrorKind::invalid_argument, mode != LinearMode::f32,
                    "linear '{}': the CUDA backend computes in mixed precision (bf16 or fp8); "
                    "LinearMode f32 (compute fp32) is the CPU reference's",
                    name);
  check_rank(x, 2, "linear x");
  check_rank(w, 2, "linear w");
  const std::int64_t m = x.shape[0], k = x.shape[1], n = w.shape[0];
  auto ctx = new_linear_context(mode, name, overlap_.get(), fp8_options());
  if (mode == LinearMode::bf16) {
    linear_forward_cuda(*gemm_, ctx->config, x, w, y, ctx->saved, stream_);
    return ctx;
  }
  const LinearFp8Sizes z = linear_fp8_sizes(ctx->config.fp8, m, k, n);
  const std::string what = ctx->config.name + " saved FP8 operands";
  ctx->kept = PoolBlock(
      this,
      Carver::size(u(z.xq_t)) + Carver::size(u(z.wq_t)) + Carver::size(3 * sizeof(Fp8Meta)) +
          Carver::size(f32_bytes(z.xq_t_inv)) + Carver::size(f32_bytes(z.wq_t_inv)),
      MemoryKind::activations, what.c_str());
  // Two workspaces, the big one first: Xq alone may fit memory lent by lend_idle.
  PoolBlock transient_x(this, Carver::size(u(z.xq)) + Carver::size(f32_bytes(z.xq_inv)),
                        MemoryKind::workspace, "linear forward Xq");
  PoolBlock transient_w(this, Carver::size(u(z.wq)) + Carver::size(f32_bytes(z.wq_inv)),
                        MemoryKind::workspace, "linear forward Wq");
  Carver kept(ctx->kept.get()), scratch_x(transient_x.get()), scratch_w(transient_w.get());
  LinearSavedCuda& s = ctx->saved;
  if (z.xq_t) s.xq_t = kept.tensor(DType::e4m3, {k, m});
  s.wq_t = kept.tensor(DType::e4m3, {k, n});
  s.meta = static_cast<Fp8Meta*>(kept.take(3 * sizeof(Fp8Meta)));
  s.xq_t_inv = kept.scales(z.xq_t_inv);
  s.wq_t_inv = kept.scales(z.wq_t_inv);
  s.xq = scratch_x.tensor(DType::e4m3, {m, k});
  s.xq_inv = scratch_x.scales(z.xq_inv);
  s.wq = scratch_w.tensor(DType::e4m3, {n, k});
  s.wq_inv = scratch_w.scales(z.wq_inv);
  FP8LAB_CUDA_CHECK(cudaMemsetAsync(s.meta, 0, 3 * sizeof(Fp8Meta), stream_));
  if (x_amax) check_amax_slot_format(x_amax, Fp8Format::e4m3, ctx->config.name + ".x");
  if (w_amax) check_amax_slot_format(w_amax, Fp8Format::e4m3, ctx->config.name + ".w");
  // The casts flag their non-finite amaxes themselves (no launches of their own).
  ctx->config.first_nonfinite = flag_first_nonfinite();
  ctx->config.nonfinite_ids = {nonfinite_id(ctx->config.name + ".x"),
                               nonfinite_id(ctx->config.name + ".w"),
                               nonfinite_id(ctx->config.name + ".dy")};
  {
    PhaseTimers phases(*this, ctx->config);
    linear_forward_cuda(*gemm_, ctx->config, x, w, y, s, stream_, x_amax, w_amax);
  }
  s.xq = s.xq_inv = {};  // given back with the transients below (stream-ordered after the GEMM)
  s.wq = s.wq_inv = {};
  return ctx;
}

void CudaBackend::linear_backward(LinearContext& saved, const TensorView& dy, const TensorView& dx,
                                  const TensorView& dw_accum, AmaxSlot dy_amax,
                                  GradWrite dw_write) {
  const bool accumulate = dw_write == GradWrite::accumulate;
  auto* ctx = dynamic_cast<CudaLinearContext*>(&saved);
  FP8LAB_CHECK(ctx != nullptr, "linear_backward: the saved state was not made by the CUDA backend");
  OpTimer timer(*this, ctx->config.mode == LinearCudaMode::bf16 ? "linear_backward bf16"
                                                                : "linear_backward fp8");
  // f32 or bf16 (PrecisionConfig::grads). A bf16 dW is rounded once per call: the BF16 GEMMs'
  // epilogue stores bf16(fp32 product + float(dW)); an FP8 wgrad that adds into it goes through
  // an f32 scratch carved below (linear_wgrad_stages_f32).
  grad_type(dw_accum, "linear dw");
  if (ctx->config.mode == LinearCudaMode::bf16) {
    linear_backward_cuda(*gemm_, ctx->config, ctx->saved, dy, dx, dw_accum, {}, accumulate,
                         stream_);
    return;
  }
  check_rank(dy, 2, "linear dy");
  const std::int64_t m = dy.shape[0], n = dy.shape[1];
  const LinearFp8Sizes z = linear_fp8_sizes(ctx->config.fp8, m, 1, n);
  const bool stage_f32 = linear_wgrad_stages_f32(ctx->config, dw_accum.dtype, accumulate);
  PoolBlock block(this,
                  Carver::size(u(z.dyq)) + Carver::size(u(z.dyq_t)) +
                      Carver::size(f32_bytes(z.dyq_inv)) + Carver::size(f32_bytes(z.dyq_t_inv)),
                  MemoryKind::workspace, "linear dYq, dYqᵀ");
  Carver carve(block.get());
  LinearScratch scratch;
  scratch.dyq = carve.tensor(DType::e5m2, {m, n});
  if (z.dyq_t) scratch.dyq_t = carve.tensor(DType::e5m2, {n, m});
  scratch.dyq_inv = carve.scales(z.dyq_inv);
  scratch.dyq_t_inv = carve.scales(z.dyq_t_inv);
  // A block of its own, after dYq's: dYq alone may fit memory lent by lend_idle.
  PoolBlock dw_block;
  if (stage_f32) {
    dw_block = PoolBlock(this, f32_bytes(dw_accum.numel()), MemoryKind::workspace,
                         "linear dW (f32, for a bf16 gradient)");
    scratch.dw_f32 = {dw_block.get(), DType::f32, dw_accum.shape, Device::cuda};
  }
  if (dy_amax) check_amax_slot_format(dy_amax, Fp8Format::e5m2, ctx->config.name + ".dy");
  PhaseTimers phases(*this, ctx->config);
  linear_backward_cuda(*gemm_, ctx->config, ctx->saved, dy, dx, dw_accum, scratch, accumulate,
                       stream_, dy_amax);
}

std::unique_ptr<LinearContext> CudaBackend::linear_gelu_forward(
    LinearMode mode, const TensorView& x, const TensorView& w, const TensorView& pre,
    const TensorView& y, std::string_view name, AmaxSlot x_amax, AmaxSlot y_amax, AmaxSlot w_amax) {
  // An amax of y (an FP8 consumer) would need a pass over y anyway: the separate GELU kernel
  // reduces it as it stores.
  if (mode != LinearMode::bf16 || y_amax)
    return Backend::linear_gelu_forward(mode, x, w, pre, y, name, x_amax, y_amax, w_amax);
  OpTimer timer(*this, "linear_forward bf16 +gelu");
  nn::check_linear_gelu(pre, y, name);
  auto ctx = new_linear_context(mode, name, overlap_.get(), fp8_options());
  linear_gelu_forward_cuda(*gemm_, ctx->config, x, w, pre, y, ctx->saved, stream_);
  return ctx;
}

// Chunk by chunk: logits = x_c wᵀ (fp32 accumulation) -> loss rows and bf16 dlogits ->
// dx_c = dlogits · w and dw += dlogitsᵀ · x_c. Only one chunk's logits exist at a time.
// Training stores the chunk's logits in bf16 and turns them into dlogits in place (what
// PyTorch's autocast does; half the bytes of the heaviest memory traffic of the step, see
// docs/performance.md, "Classifier and cross-entropy"); evaluation (no dx) keeps f32 logits,
// so scored losses carry no bf16 rounding of the logits.
LossSums CudaBackend::cross_entropy(const TensorView& x, const TensorView& w,
                                    const TensorView& targets, int ignore_index, int chunk_rows,
                                    float grad_scale, const TensorView& dx,
                                    const TensorView& dw_accum, GradWrite dw_write) {
  OpTimer timer(*this, "cross_entropy");
  check_bf16(x, "cross_entropy x");
  check_bf16(w, "cross_entropy w (the bf16 working copy of the tied embedding)");
  check_rank(x, 2, "cross_entropy x");
  check_rank(w, 2, "cross_entropy w");
  check_device(targets, Device::cuda, "cross_entropy targets");
  check_dtype(targets, DType::i32, "cross_entropy targets");
  const std::int64_t rows = x.shape[0], d = x.shape[1], vocab = w.shape[0];
  FP8LAB_CHECK_KIND(ErrorKind::shape, w.shape[1] == d && targets.numel() == rows,
                    "cross_entropy: x {}, w {}, targets {} do not fit [M, D], [V, D], [M]",
                    x.describe(), w.describe(), targets.describe());
  FP8LAB_CHECK(chunk_rows > 0, "cross_entropy: chunk_rows {} must be positive", chunk_rows);
  const bool training = dx.data != nullptr;
  if (training) {
    check_bf16(dx, "cross_entropy dx");
    check_shape(dx, x.shape, "cross_entropy dx");
    grad_type(dw_accum, "cross_entropy dw");  // f32 or bf16 (PrecisionConfig::grads)
    check_shape(dw_accum, w.shape, "cross_entropy dw");
  }
  // A bf16 dW: the chunks' products are summed in an fp32 [V, D] workspace and added to the
  // stored value once, at the end (one rounding per micro-batch, not one per chunk, where a
  // rare token's small share would vanish into a large running sum; the CPU backend's sum).
  const bool dw_bf16 = training && dw_accum.dtype == DType::bf16;
  PoolBlock dw_sum_block;
  TensorView dw_target = dw_accum;
  if (dw_bf16) {
    dw_sum_block =
        PoolBlock(this, f32_bytes(vocab * d), MemoryKind::workspace, "lm head dw sum (f32)");
    dw_target = {dw_sum_block.get(), DType::f32, w.shape, Device::cuda};
    if (rows == 0)
      FP8LAB_CUDA_CHECK(cudaMemsetAsync(dw_target.data, 0, dw_target.nbytes(), stream_));
  }
  const std::int64_t chunk = std::min<std::int64_t>(chunk_rows, rows);
  const DType logits_dtype = training ? DType::bf16 : DType::f32;
  PoolBlock logits_block(this, u(chunk * vocab) * dtype_size(logits_dtype), MemoryKind::workspace,
                         training ? "logits/dlogits chunk (bf16)" : "logits chunk (f32)");
  PoolBlock loss_block(this, u(rows) * 4, MemoryKind::workspace, "loss rows");
  FP8LAB_CUDA_CHECK(cudaMemsetAsync(flag_loss_sum(), 0, sizeof(double), stream_));
  FP8LAB_CUDA_CHECK(cudaMemsetAsync(flag_counted(), 0, sizeof(long long), stream_));
  auto rows_of = [](const TensorView& t, std::int64_t r0, std::int64_t n) {
    TensorView v = t;
    v.data = static_cast<char*>(t.data) + u(r0 * t.shape[1]) * dtype_size(t.dtype);
    v.shape = {n, t.shape[1]};
    return v;
  };
  auto* loss = static_cast<float*>(loss_block.get());
  for (std::int64_t r0 = 0; r0 < rows; r0 += chunk) {
    const std::int64_t n = std::min(chunk, rows - r0);
    const TensorView xc = rows_of(x, r0, n);
    const TensorView logits{logits_block.get(), logits_dtype, {n, vocab}, Device::cuda};
    std::optional<OpTimer> part(std::in_place, *this, "cross_entropy: logits GEMM");
    gemm_->matmul({xc, true}, {w, true}, logits, {}, stream_);
    part.emplace(*this, "cross_entropy: softmax rows");
    const TensorView& dlogits = logits;  // training: in place (bf16)
    cuda_ops::cross_entropy_rows(logits.data,
                                 training ? cuda_ops::ElemType::bf16 : cuda_ops::ElemType::f32,
                                 targets.as<const std::int32_t>() + r0, ignore_index, grad_scale,
                                 training ? static_cast<std::uint16_t*>(dlogits.data) : nullptr,
                                 loss + r0, n, to_int(vocab, "vocab"), flag_bad_target(), stream_);
    check_launch("cross_entropy_rows", __FILE__, __LINE__);
    if (!training) continue;
    part.emplace(*this, "cross_entropy: dx GEMM");
    gemm_->matmul({dlogits, true}, {w, false}, rows_of(dx, r0, n), {}, stream_);
    part.emplace(*this, "cross_entropy: dw GEMM");
    const bool first_write = r0 == 0 && (dw_write == GradWrite::overwrite || dw_bf16);
    gemm_->matmul({dlogits, false}, {xc, false}, dw_target, {.accumulate = !first_write}, stream_);
  }
  if (dw_bf16) {
    OpTimer part(*this, "cross_entropy: dw into bf16");
    if (dw_write == GradWrite::overwrite) {
      convert(dw_target, dw_accum);
    } else {
      add_inplace(dw_accum, dw_target);
    }
  }
  cuda_ops::loss_reduce(loss, targets.as<const std::int32_t>(), ignore_index, rows, flag_loss_sum(),
                        flag_counted(), stream_);
  check_launch("loss_reduce", __FILE__, __LINE__);
  LossSums sums;
  long long counted = 0;
  FP8LAB_CUDA_CHECK(cudaMemcpyAsync(&sums.loss_sum, flag_loss_sum(), sizeof(double),
                                    cudaMemcpyDeviceToHost, stream_));
  FP8LAB_CUDA_CHECK(
      cudaMemcpyAsync(&counted, flag_counted(), sizeof(counted), cudaMemcpyDeviceToHost, stream_));
  synchronize();  // also reports a bad target or a non-finite FP8 cast of this forward
  sums.counted = counted;
  return sums;
}

}  // namespace fp8lab::cuda
#endif  // FP8LAB_HAVE_CUDA
