// The CPU reference backend (see fp8lab/backend.hpp). Its op bodies are spread over
// src/cpu_backend/cpu_*.cpp, one file per op family, so each stays short.
#pragma once

#include "fp8lab/backend.hpp"

#include <array>
#include <mutex>

namespace fp8lab::cpu {

class CpuBackend final : public Backend {
 public:
  CpuBackend();
  Device device() const override { return Device::cpu; }
  std::string name() const override { return "cpu"; }
  std::string device_name() const override;

  Buffer allocate(MemoryKind kind, DType dtype, const Shape& shape, std::string_view name) override;
  MemoryStats memory_stats() const override;
  void upload(const TensorView& dst, const void* host_src) override;
  void download(const TensorView& src, void* host_dst) override;
  void synchronize() override {}

  void fill_zero(const TensorView& t) override;
  void convert(const TensorView& src, const TensorView& dst, AmaxSlot amax = {}) override;
  void add_inplace(const TensorView& dst, const TensorView& src) override;
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
  LossSums cross_entropy(const TensorView& x, const TensorView& w, const TensorView& targets,
                         int ignore_index, int chunk_rows, float grad_scale, const TensorView& dx,
                         const TensorView& dw_accum,
                         GradWrite dw_write = GradWrite::accumulate) override;

  double sum_of_squares(const TensorView& t) override;
  bool all_finite(const TensorView& t) override;
  void adamw_update(const TensorView& param, const TensorView& grad, const TensorView& m,
                    const TensorView& v, const AdamWStep& step, const TensorView& working,
                    AmaxSlot working_amax) override;

  // Inference (cpu_inference.cpp).
  void attention_cached_forward(const TensorView& qkv, int n_heads, std::int64_t pos,
                                const TensorView& k_cache, const TensorView& v_cache,
                                const TensorView& out) override;
  void lm_head_logits(const TensorView& x, const TensorView& w, const TensorView& logits) override;

 private:
  void account(std::int64_t delta, MemoryKind kind);
  mutable std::mutex mutex_;
  MemoryStats stats_;
};

// A producer's fused amax (AmaxSlot): the amax of what the op stored in y, finalised into the
// slot as the CUDA kernels finalise it. No slot: nothing.
void store_output_amax(const TensorView& y, AmaxSlot slot);

// Row-major fp32 GEMM helpers over BLAS (used by attention, the loss and the f32 linear):
// c[m, n] (=|+=) alpha * sum_k a[m, k] b[n, k]  (b transposed, "TN" as the FP8 GEMMs)
void sgemm_nt(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
              float beta, float* c, int ldc);
// c[m, n] = alpha * sum_k a[m, k] b[k, n] + beta * c
void sgemm_nn(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
              float beta, float* c, int ldc);
// c[m, n] = alpha * sum_k a[k, m] b[k, n] + beta * c
void sgemm_tn(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
              float beta, float* c, int ldc);

}  // namespace fp8lab::cpu
