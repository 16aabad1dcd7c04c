// CudaBackend::prepare_fp8_weights: the FP8 linears' W casts made ahead of their forwards, on the
// side stream (docs/perf-notes.md v28).
//
// Without it each linear forks its W cast beside its own x cast: both are bandwidth-bound, the
// W cast's two kernels start behind the x cast's CTAs, and the main stream waits for them ("W
// wait": 2.1 ms of a gpt1.3b fp8-linears step, out of 3.1 ms for the casts run serially). The
// model hints the next block's weights while it runs the current one, so the casts run beside
// that block's work and are done when their linears start.
//
// Each cast goes into the pool blocks its linear will keep (cuda_linear_state.hpp): Wqᵀ and
// the three metas (zeroed here, on the side stream, before W's is written) until the
// backward, Wq until the forward GEMM is queued. The blocks are allocated on the main stream
// and the side stream forks after that, so it never writes memory the pool still orders
// behind earlier work; every block goes back only after the main stream has waited for the
// cast (the linear's "W wait", or drop_prepared).
#if defined(FP8LAB_HAVE_CUDA)
#include <algorithm>

#include "fp8lab/cuda_check.hpp"
#include "fp8lab/linear_cuda.hpp"
#include "nn/cuda_backend.hpp"
#include "nn/cuda_linear_state.hpp"

namespace fp8lab::cuda {

void CudaBackend::set_cast_flags(LinearCudaConfig& config) {
  // The casts flag their non-finite amaxes themselves (no launches of their own).
  config.first_nonfinite = flag_first_nonfinite();
  config.nonfinite_ids = {nonfinite_id(config.name + ".x"), nonfinite_id(config.name + ".w"),
                          nonfinite_id(config.name + ".dy")};
}

void CudaBackend::prepare_fp8_weights(std::span<const LinearWeight> weights) {
  if (!w_cast_overlap_ || !w_prefetch_ || weights.empty()) return;
  drop_prepared(weights);  // an earlier cast of the same W that no forward took
  const std::size_t first = prepared_.size();
  for (const LinearWeight& lw : weights) {
    check_rank(lw.w, 2, "prepared linear w");
    check_device(lw.w, Device::cuda, "prepared linear w");
    check_dtype(lw.w, DType::bf16, "prepared linear w");
    const std::int64_t n = lw.w.shape[0], k = lw.w.shape[1];
    PreparedWeight p;
    p.data = lw.w.data;
    p.shape = lw.w.shape;
    p.name = std::string(lw.name);
    const std::string what = p.name + " W cast ahead";
    p.kept = PoolBlock(this, weight_state_bytes(k, n), MemoryKind::activations, what.c_str());
    // Not a workspace: memory lent by lend_idle must not outlive its loan, and this may.
    p.wq = PoolBlock(this, Carver::size(u(n * k)), MemoryKind::activations, what.c_str());
    if (!spare_done_events_.empty()) {
      p.done = spare_done_events_.back();
      spare_done_events_.pop_back();
    } else {
      FP8LAB_CUDA_CHECK(cudaEventCreateWithFlags(&p.done, cudaEventDisableTiming));
    }
    prepared_.push_back(std::move(p));
  }
  cudaStream_t side = overlap_->side;
  FP8LAB_CUDA_CHECK(cudaEventRecord(overlap_->fork, stream_));
  FP8LAB_CUDA_CHECK(cudaStreamWaitEvent(side, overlap_->fork, 0));
  for (std::size_t i = 0; i < weights.size(); ++i) {
    PreparedWeight& p = prepared_[first + i];
    const std::int64_t n = p.shape[0], k = p.shape[1];
    LinearCudaConfig config;
    config.mode = LinearCudaMode::fp8_fused;  // linear_forward's mode for LinearMode::fp8
    config.name = p.name;
    set_cast_flags(config);
    Carver carve(p.kept.get());
    const WeightState ws = carve_weight_state(carve, k, n);
    LinearSavedCuda saved;
    saved.mode = config.mode;
    saved.wq_t = ws.wq_t;
    saved.meta = ws.meta;
    saved.wq = Carver(p.wq.get()).tensor(DType::e4m3, {n, k});
    FP8LAB_CUDA_CHECK(cudaMemsetAsync(ws.meta, 0, 3 * sizeof(Fp8Meta), side));
    linear_cast_weight_cuda(config, weights[i].w, saved, side);
    FP8LAB_CUDA_CHECK(cudaEventRecord(p.done, side));
  }
}

std::optional<CudaBackend::PreparedWeight> CudaBackend::take_prepared(const TensorView& w,
                                                                      std::string_view name) {
  const auto it = std::find_if(prepared_.begin(), prepared_.end(), [&](const PreparedWeight& p) {
    return p.data == w.data && p.shape == w.shape && p.name == name;
  });
  if (it == prepared_.end()) return std::nullopt;
  std::optional<PreparedWeight> taken(std::move(*it));
  prepared_.erase(it);
  ++w_casts_taken_ahead_;
  return taken;
}

void CudaBackend::drop_prepared(std::span<const LinearWeight> weights) {
  const auto stale = [&](const PreparedWeight& p) {
    return std::any_of(weights.begin(), weights.end(),
                       [&](const LinearWeight& lw) { return lw.w.data == p.data; });
  };
  for (PreparedWeight& p : prepared_) {
    if (!stale(p)) continue;
    FP8LAB_CUDA_CHECK(cudaStreamWaitEvent(stream_, p.done, 0));
    spare_done_events_.push_back(p.done);
    p.done = nullptr;
  }
  // The blocks go back, stream-ordered after the waits.
  std::erase_if(prepared_, [](const PreparedWeight& p) { return p.done == nullptr; });
}

}  // namespace fp8lab::cuda
#endif  // FP8LAB_HAVE_CUDA
