// The CUDA backend of the op interface (see fp8lab/backend.hpp): the same model code as the CPU
// reference, on one GPU.
//
// Memory: every buffer comes from one stream-ordered pool (cudaMallocAsync on the backend's
// stream, with the pool told to keep what it has), so after the first step no call reaches the
// driver's allocator and nothing synchronises. The model allocates all of its activations once,
// at construction, for its config (the plan); only the FP8 linears' saved operands and the ops'
// scratch are taken and given back inside a step, in stack-like order. memory_stats() counts
// the bytes handed out (what PyTorch's max_memory_allocated counts), and pool_reserved_peak()
// what the pool took from the device.
//
// Precision: mixed compute only (bf16 activations, fp32 master weights, gradients, residual
// stream and statistics); `compute fp32` is the CPU reference's job and is refused by name.
//
// Host round trips: upload, download, cross_entropy (it returns the loss), sum_of_squares,
// all_finite and synchronize. At each of them the backend also reads the device's error flags
// (a token or target outside the vocabulary, the first FP8 cast that saw inf/NaN) and throws the
// error there, naming the row or the linear.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fp8lab/backend.hpp"

namespace fp8lab {

class CublasLtGemm;
class LinearCudaOverlap;

namespace cuda {

// A piece of pool memory owned for a while (scratch, FP8 saved state); returned on destruction.
class PoolBlock {
 public:
  PoolBlock() = default;
  PoolBlock(class CudaBackend* backend, std::size_t bytes, MemoryKind kind, const char* what);
  PoolBlock(PoolBlock&& o) noexcept;
  PoolBlock& operator=(PoolBlock&& o) noexcept;
  PoolBlock(const PoolBlock&) = delete;
  PoolBlock& operator=(const PoolBlock&) = delete;
  ~PoolBlock();
  void* get() const { return ptr_; }
  std::size_t size() const { return bytes_; }
  void reset();

 private:
  class CudaBackend* backend_ = nullptr;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  MemoryKind kind_ = MemoryKind::workspace;
  bool lent_ = false;  // placed in memory lent by lend_idle, not taken from the pool
};

// The GPU time of each op, for the benchmarks' breakdown: with op timing on, every op records
// CUDA events around its launches; take_op_times() sums them per op name.
struct OpTime {
  std::string name;
  double ms = 0;       // GPU time between the op's events on the stream
  double host_ms = 0;  // host time inside the op's call (launches, checks, any wait)
  int calls = 0;
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(const KernelOptions& kernels = {});
  ~CudaBackend() override;
  const KernelOptions& kernels() const { return kernels_; }
  Device device() const override { return Device::cuda; }
  std::string name() const override { return "cuda"; }
  std::string device_name() const override;

  Buffer allocate(MemoryKind kind, DType dtype, const Shape& shape, std::string_view name) override;
  MemoryStats memory_stats() const override;
  void upload(const TensorView& dst, const void* host_src) override;
  void download(const TensorView& src, void* host_dst) override;
  void synchronize() override;
  void lend_idle(const TensorView& region) override;

  void fill_zero(const TensorView& t) override;
  void convert(const TensorView& src, const TensorView& dst, AmaxSlot amax = {}) override;
  void add_inplace(const TensorView& dst, const TensorView& src) override;
  void add(const TensorView& a, const TensorView& b, const TensorView& out) override;
  void scale_inplace(const TensorView& t, float factor) override;

  void embedding_forward(const TensorView& tokens, const TensorView& wte, const TensorView& wpe,
                         const TensorView& out) override;
  void embedding_backward(const TensorView& tokens, const TensorView& dout,
                          const TensorView& dwte_accum, const TensorView& dwpe_accum) override;
  void rmsnorm_forward(const TensorView& x, const TensorView& w, float eps, const TensorView& y,
                       const TensorView& rstd, AmaxSlot amax = {}) override;
  void rmsnorm_backward(const TensorView& x, const TensorView& w, const TensorView& rstd,
                        const TensorView& dy, const TensorView& dx_accum,
                        const TensorView& dw_accum,
                        GradWrite dw_write = GradWrite::accumulate) override;
  void add_rmsnorm_forward(const TensorView& x, const TensorView& branch, const TensorView& sum_out,
                           const TensorView& w, float eps, const TensorView& y,
                           const TensorView& rstd, AmaxSlot amax = {}) override;
  void rmsnorm_backward_and_convert(const TensorView& x, const TensorView& w,
                                    const TensorView& rstd, const TensorView& dy,
                                    const TensorView& dx_accum, const TensorView& dw_accum,
                                    const TensorView& dx_copy, AmaxSlot copy_amax = {},
                                    GradWrite dw_write = GradWrite::accumulate) override;
  void attention_forward(const TensorView& qkv, int n_heads, int seq_len, const TensorView& out,
                         const TensorView& lse, AmaxSlot out_amax = {}) override;
  void attention_backward(const TensorView& qkv, const TensorView& out, const TensorView& lse,
                          const TensorView& dout, int n_heads, int seq_len, const TensorView& dqkv,
                          AmaxSlot dqkv_amax = {}) override;
  void gelu_forward(const TensorView& x, const TensorView& y, AmaxSlot amax = {}) override;
  void gelu_backward(const TensorView& x, const TensorView& dy, const TensorView& dx,
                     AmaxSlot amax = {}) override;
  std::unique_ptr<LinearContext> linear_forward(LinearMode precision, const TensorView& x,
                                                const TensorView& w, const TensorView& y,
                                                std::string_view name, AmaxSlot x_amax = {},
                                                AmaxSlot w_amax = {}) override;
  void linear_backward(LinearContext& saved, const TensorView& dy, const TensorView& dx,
                       const TensorView& dw_accum, AmaxSlot dy_amax = {},
                       GradWrite dw_write = GradWrite::accumulate) override;
  // bf16 (with no amax wanted of y): one GEMM, GELU in cuBLASLt's epilogue
  // (linear_gelu_forward_cuda); otherwise the Backend default.
  std::unique_ptr<LinearContext> linear_gelu_forward(LinearMode precision, const TensorView& x,
                                                     const TensorView& w, const TensorView& pre,
                                                     const TensorView& y, std::string_view name,
                                                     AmaxSlot x_amax = {},
                                                     AmaxSlot y_amax = {},
                                                     AmaxSlot w_amax = {}) override;
  LossSums cross_entropy(const TensorView& x, const TensorView& w, const TensorView& targets,
                         int ignore_index, int chunk_rows, float grad_scale, const TensorView& dx,
                         const TensorView& dw_accum,
                         GradWrite dw_write = GradWrite::accumulate) override;
  double sum_of_squares(const TensorView& t) override;
  bool all_finite(const TensorView& t) override;
  void adamw_update(const TensorView& param, const TensorView& grad, const TensorView& m,
                    const TensorView& v, const AdamWStep& step, const TensorView& working,
                    AmaxSlot working_amax) override;

  // Inference (cuda_inference_ops.cpp).
  void attention_cached_forward(const TensorView& qkv, int n_heads, std::int64_t pos,
                                const TensorView& k_cache, const TensorView& v_cache,
                                const TensorView& out) override;
  void lm_head_logits(const TensorView& x, const TensorView& w, const TensorView& logits) override;

  // ---- beyond the interface (benchmarks, tests) ---------------------------------------------
  cudaStream_t stream() const { return stream_; }
  void reset_peak();                       // peak := current (e.g. after set-up)
  std::size_t pool_reserved_peak() const;  // bytes the pool took from the device, at most
  void set_op_timing(bool on) { op_timing_ = on; }
  bool op_timing() const { return op_timing_; }
  std::vector<OpTime> take_op_times();  // synchronises; sums per op, in first-seen order

  // Pool access for PoolBlock.
  void* pool_allocate(std::size_t bytes, MemoryKind kind, const char* what);
  void pool_release(void* ptr, std::size_t bytes, MemoryKind kind);
  // Workspaces in lent memory (lend_idle): nullptr when there is no loan or it is too full.
  void* lent_take(std::size_t bytes);
  void lent_give(void* ptr, std::size_t bytes);

 private:
  struct DeviceFlags;  // error flags in device memory (see the file comment)
  void account(std::int64_t delta, MemoryKind kind);
  void check_flags();  // after a synchronisation: throws what the kernels recorded
  int nonfinite_id(const std::string& tensor_name);
  // Device addresses inside the flags, for the kernels that write them.
  int* flag_bad_token();
  int* flag_bad_target();
  int* flag_first_nonfinite();
  double* flag_loss_sum();
  long long* flag_counted();

  // A family asked for by name that has no kernel for a head dimension runs the next one down
  // (cuda_attention_dispatch.cu); the backend says so once per direction and head dimension.
  void note_attention_fallback(bool forward, int head_dim);
  std::set<std::pair<bool, int>> attention_fallbacks_noted_;

  KernelOptions kernels_;
  cudaStream_t stream_ = nullptr;
  cudaMemPool_t pool_ = nullptr;
  std::unique_ptr<CublasLtGemm> gemm_;
  std::unique_ptr<LinearCudaOverlap> overlap_;
  PoolBlock flags_block_;
  DeviceFlags* flags_ = nullptr;  // device pointer inside flags_block_
  std::vector<std::string> nonfinite_names_;
  std::map<std::string, int, std::less<>> nonfinite_ids_;
  mutable std::mutex mutex_;
  MemoryStats stats_;
  // The current loan: workspaces are stacked from `base`; `live` counts those not yet given back.
  struct Loan {
    char* base = nullptr;
    std::size_t capacity = 0, top = 0;
    int live = 0;
  } loan_;

  friend class OpTimer;
  bool op_timing_ = false;
  struct TimedOp {
    const char* name;
    cudaEvent_t start, stop;
    double host_ms;
  };
  std::vector<TimedOp> timed_ops_;
  std::vector<cudaEvent_t> free_events_;
  cudaEvent_t take_event();
};

// Scope guard of one timed op (does nothing while op timing is off).
class OpTimer {
 public:
  OpTimer(CudaBackend& backend, const char* name);
  ~OpTimer();
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  CudaBackend& backend_;
  const char* name_;
  cudaEvent_t start_ = nullptr;
  std::chrono::steady_clock::time_point host_start_;
};

}  // namespace cuda

}  // namespace fp8lab
