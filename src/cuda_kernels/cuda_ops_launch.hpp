// Kernel launchers of the CUDA model backend (src/cuda_kernels/*.cu, each beside its kernels;
// attention in src/cuda_attention/), called by CudaBackend (src/cuda_backend/), which validates
// every view first and checks every launch.
//
// Why a plain header: nvcc (13.0, C++20) cannot compile fmt, which every checked fp8lab header
// includes, so the .cu files see only raw pointers, sizes, element types and a stream. Nothing
// here allocates: a launcher that needs scratch says how much through its *_workspace_bytes()
// twin, and the caller passes it in (the backend takes it from its pool).
//
// Numerics follow the CPU reference backend (fp8lab/backend.hpp): compute in fp32, round once
// on a bf16 store (round to nearest even), accumulate "_accum" outputs (+=), overwrite the rest.
// Every reduction is deterministic (fixed partition, fixed order): the same inputs give the same
// bits run after run, so resumed and repeated runs are reproducible on the GPU too.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "fp8/fp8_launch.hpp"  // detail::ElemType { f32, bf16 }
#include "fp8lab/fp8_format.hpp"
#include "fp8lab/fp8_meta.hpp"
#include "fp8lab/kernel_options.hpp"

namespace fp8lab::cuda_ops {

using detail::ElemType;

// The producer-fused amax (AmaxSlot in fp8lab/backend.hpp): a kernel given a meta also reduces
// max|stored value| into it and finalises the scale for `format` (src/fp8/amax_device.cuh), the
// same Fp8Meta bytes amax_scale_cuda would write reading the output back. Deferred: it only
// accumulates the keys into meta->amax_bits_accum (zeroed by the caller), and the reader
// finalises. No meta: no amax.
struct AmaxOut {
  Fp8Meta* meta = nullptr;
  Fp8Format format = Fp8Format::e4m3;
  bool deferred = false;
};

// ---- elementwise (src/cuda_kernels/cuda_elementwise.cu) -----------------------------------------
// dst = src, element types may differ (f32 -> bf16 rounds to nearest even).
void convert(const void* src, ElemType src_type, void* dst, ElemType dst_type, std::int64_t n,
             cudaStream_t stream, AmaxOut amax = {});
// dst += src in fp32, then stored in dst's type.
void add_inplace(void* dst, ElemType dst_type, const void* src, ElemType src_type, std::int64_t n,
                 cudaStream_t stream);
void scale_inplace_f32(float* t, float factor, std::int64_t n, cudaStream_t stream);

// The amax of t handed into `amax` as a producer kernel would (all of t, n >= 0; nothing
// without a meta): for outputs another library wrote.
void amax_only(const void* t, ElemType type, std::int64_t n, cudaStream_t stream, AmaxOut amax);
// Sum of squares of an f32 or bf16 tensor (each element widened exactly to fp32, squared and
// accumulated in f64), written to *out (device). Deterministic: fixed grid, per-block partials in
// `workspace`, reduced in order by one block; which thread sums which element depends on n
// only, so both element types (and any alignment) share one order.
std::size_t sum_of_squares_workspace_bytes();
void sum_of_squares(const void* t, ElemType type, std::int64_t n, double* out, void* workspace,
                    cudaStream_t stream);
// *all_finite (device) = 1 when no element is inf or NaN, else 0.
void all_finite(const void* t, ElemType type, std::int64_t n, int* all_finite_out,
                cudaStream_t stream);

// GELU, tanh form (see Backend::gelu_forward); x, y, dy, dx of any element types.
void gelu_forward(const void* x, ElemType x_type, void* y, ElemType y_type, std::int64_t n,
                  cudaStream_t stream, AmaxOut amax = {});
void gelu_backward(const void* x, ElemType x_type, const void* dy, ElemType dy_type, void* dx,
                   ElemType dx_type, std::int64_t n, cudaStream_t stream, AmaxOut amax = {});

// One AdamW update (f32 param, grad, m, v of n elements), the CPU optimizer's arithmetic:
// g = float(grad) * grad_scale; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
// p -= lr * ((m / bc1) / (sqrt(v / bc2) + eps) + wd * p); working (bf16, optional) = bf16(p).
struct AdamWArgs {
  float lr, beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2;
  float grad_scale = 1.f;
};
// grad is `grad_type` (f32 or bf16: PrecisionConfig::grads, widened exactly); m and v are
// `moments` (f32 or bf16, both the same); the step is computed from the new moments before they
// are rounded to bf16. With working_amax (and working): also the amax of the stored working
// copy, as convert's.
void adamw_update(float* param, const void* grad, ElemType grad_type, void* m, void* v,
                  ElemType moments, std::uint16_t* working, std::int64_t n, const AdamWArgs& args,
                  cudaStream_t stream, AmaxOut working_amax = {});

// ---- embedding (src/cuda_kernels/cuda_embedding.cu) ---------------------------------------------
// out[m, :] = wte[tokens[m], :] + wpe[m % seq_len, :]; out f32 or bf16. A token outside
// [0, vocab) writes zeros for its row and records min(row index) + 1 in *bad_token (device int,
// 0 = none; the backend zeroes it and reads it at its next synchronisation point).
void embedding_forward(const std::int32_t* tokens, const float* wte, const float* wpe, void* out,
                       ElemType out_type, std::int64_t rows, int seq_len, int d_model, int vocab,
                       int* bad_token, cudaStream_t stream);
// dwte[v] += sum of dout rows whose token is v; dwpe[t] += sum of dout rows at position t.
// dwte and dwpe are both `grad_type` (f32 or bf16): each element is loaded once, its rows added
// in fp32 in row order, and stored once (one rounding for bf16).
// Deterministic (no float atomics): rows are grouped by token id in a fixed order in `workspace`.
std::size_t embedding_backward_workspace_bytes(std::int64_t rows, int vocab);
void embedding_backward(const std::int32_t* tokens, const void* dout, ElemType dout_type,
                        void* dwte_accum, void* dwpe_accum, ElemType grad_type, std::int64_t rows,
                        int seq_len, int d_model, int vocab, void* workspace, cudaStream_t stream);

// ---- RMSNorm (src/cuda_kernels/cuda_rmsnorm.cu, cuda_add_rmsnorm.cu) ----------------------------
// y = x * rstd * w, rstd[m] = 1 / sqrt(mean(x[m]^2) + eps); w, rstd f32.
void rmsnorm_forward(const void* x, ElemType x_type, const float* w, float eps, void* y,
                     ElemType y_type, float* rstd, std::int64_t rows, int d_model,
                     cudaStream_t stream, AmaxOut amax = {});
// dx_accum += dL/dx; dw_accum += dL/dw, or = with accumulate_dw false (row partials in
// `workspace`, reduced in a fixed order in fp32). dw_accum is `dw_type` (f32 or bf16): only its
// final store differs, one rounding of the fp32 sum (old value included) for bf16.
std::size_t rmsnorm_backward_workspace_bytes(std::int64_t rows, int d_model);
void rmsnorm_backward(const void* x, ElemType x_type, const float* w, const float* rstd,
                      const void* dy, ElemType dy_type, void* dx_accum, ElemType dx_type,
                      void* dw_accum, ElemType dw_type, bool accumulate_dw, std::int64_t rows,
                      int d_model, void* workspace, cudaStream_t stream);
// rmsnorm_backward, then convert(dx_accum -> dx_copy, copy_amax): the same bits, the copy
// stored from the registers that store dx (f32 dx into a bf16 copy; other cases run the two).
// The same workspace as rmsnorm_backward.
void rmsnorm_backward_and_convert(const void* x, ElemType x_type, const float* w, const float* rstd,
                                  const void* dy, ElemType dy_type, void* dx_accum,
                                  ElemType dx_type, void* dw_accum, ElemType dw_type,
                                  bool accumulate_dw, void* dx_copy, ElemType copy_type,
                                  std::int64_t rows, int d_model, void* workspace,
                                  cudaStream_t stream, AmaxOut copy_amax = {});
// add_f32(x, branch -> sum), then rmsnorm_forward(sum -> y, rstd, amax): the same bits in one
// pass over the rows (src/cuda_kernels/cuda_add_rmsnorm.cu). sum overlaps no other argument.
void add_rmsnorm_forward(const float* x, const void* branch, ElemType branch_type, float* sum,
                         const float* w, float eps, void* y, ElemType y_type, float* rstd,
                         std::int64_t rows, int d_model, cudaStream_t stream, AmaxOut amax = {});

// ---- attention (src/cuda_attention/cuda_attention_dispatch.cu and the kernels it picks) ---------
// Causal flash attention in bf16 with fp32 softmax statistics, O(T) memory (never a [T, T]
// matrix). qkv [B*T, 3*H*hd] bf16 (q | k | v, heads of hd columns); out [B*T, H*hd] bf16;
// lse [B, H, T] f32 (natural log of the row's sum of exp(score), scores scaled by 1/sqrt(hd)).
// head_dim 32, 64 or 128; any seq_len >= 1. `amax`: the producer-fused amax of out (all of it).
// `kernels` names the family (fp8lab/kernel_options.hpp); one it is not built for runs the next
// one down. All own families give the same bits; cudnn gives cuDNN's (within the same bounds).
// `workspace`: attention_workspace_bytes(true, ...) bytes (none for the own families).
bool attention_supports_head_dim(int head_dim);
// The family that runs for a request at head_dim (after `automatic` and the fallbacks).
AttentionKernels attention_forward_family(AttentionKernels requested, int head_dim);
AttentionKernels attention_backward_family(AttentionKernels requested, int head_dim);
void attention_forward(const void* qkv, void* out, float* lse, int batch, int seq_len, int n_heads,
                       int head_dim, cudaStream_t stream, AmaxOut amax = {},
                       AttentionKernels kernels = AttentionKernels::automatic,
                       void* workspace = nullptr);
// dqkv [B*T, 3*H*hd] bf16 (overwritten), bit-identical run to run (no float atomics; cuDNN's
// deterministic backward). The workspace: Di ([B, H, T] f32) for the own families, or what
// cuDNN's graph needs. `amax`: the producer-fused amax of all of dqkv, reduced over the kernels
// that write its parts and finalised once, after the last of them.
// Workspace bytes of one direction for `kernels` (for cudnn this builds cuDNN's graph, once).
std::size_t attention_workspace_bytes(bool forward, AttentionKernels kernels, int batch,
                                      int seq_len, int n_heads, int head_dim);
void attention_backward(const void* qkv, const void* out, const float* lse, const void* dout,
                        void* dqkv, int batch, int seq_len, int n_heads, int head_dim,
                        void* workspace, cudaStream_t stream,
                        AttentionKernels kernels = AttentionKernels::automatic, AmaxOut amax = {});

// ---- classifier (src/cuda_kernels/cuda_cross_entropy.cu) ----------------------------------------
// One chunk of the tied LM head's loss. logits [rows, vocab] (f32 or bf16, from the GEMM) are
// turned in place into grad_scale * (softmax - onehot(target)) stored as bf16 into dlogits
// (may alias logits only when logits is bf16), and loss[r] = logsumexp - logit[target] (f32,
// 0 for ignored rows). Rows whose target == ignore_index get zero gradient. With dlogits null
// only the loss is computed. A target outside [0, vocab) (and not ignore_index) records
// min(row)+1 in *bad_target.
void cross_entropy_rows(const void* logits, ElemType logits_type, const std::int32_t* targets,
                        int ignore_index, float grad_scale, std::uint16_t* dlogits, float* loss,
                        std::int64_t rows, int vocab, int* bad_target, cudaStream_t stream);
// Deterministic sum of loss[0..n) in f64 and the count of targets != ignore_index, added to
// sums[0] (loss) and counts[0] (device), so chunks accumulate into one result.
void loss_reduce(const float* loss, const std::int32_t* targets, int ignore_index, std::int64_t n,
                 double* sums, long long* counts, cudaStream_t stream);

// ---- fused residual add (src/cuda_kernels/cuda_backend_kernels.cu) ------------------------------
// out = a + b in fp32 (a, out f32; b f32 or bf16): the residual stream's next buffer in one pass.
void add_f32(const float* a, const void* b, ElemType b_type, float* out, std::int64_t n,
             cudaStream_t stream);

}  // namespace fp8lab::cuda_ops
