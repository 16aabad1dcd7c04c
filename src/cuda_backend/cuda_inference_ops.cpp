// CudaBackend: the inference ops (Backend::attention_cached_forward, lm_head_logits).
#if defined(FP8LAB_HAVE_CUDA)
#include "core/cuda_check.hpp"
#include "gemm/gemm_cuda.hpp"
#include "cuda_backend/cuda_backend.hpp"
#include "cuda_backend/cuda_backend_internal.hpp"
#include "cuda_kernels/cuda_inference_launch.hpp"
#include "nn/inference_shapes.hpp"

namespace fp8lab::cuda {

void CudaBackend::attention_cached_forward(const TensorView& qkv, int n_heads, std::int64_t pos,
                                           const TensorView& k_cache, const TensorView& v_cache,
                                           const TensorView& out) {
  OpTimer timer(*this, "attention_cached_forward");
  const nn::CachedAttentionShape g =
      nn::check_cached_attention(qkv, n_heads, pos, k_cache, v_cache, out);
  check_bf16(qkv, "cached attention qkv");
  check_bf16(k_cache, "k_cache");
  check_bf16(v_cache, "v_cache");
  check_bf16(out, "cached attention out");
  cuda_ops::attention_cached_forward(
      qkv.data, k_cache.data, v_cache.data, out.data, to_int(g.rows, "cached attention rows"), pos,
      to_int(g.heads, "heads"), to_int(g.head_dim, "head_dim"), stream_);
  check_launch("attention_cached_forward", __FILE__, __LINE__);
}

// The logits GEMM of cross_entropy's evaluation path (cuda_linear_op.cpp): bf16 operands, fp32
// accumulation and output.
void CudaBackend::lm_head_logits(const TensorView& x, const TensorView& w,
                                 const TensorView& logits) {
  OpTimer timer(*this, "lm_head_logits");
  nn::check_lm_head_logits(x, w, logits);
  check_bf16(x, "lm head x");
  check_bf16(w, "lm head weight (the bf16 working copy of the tied embedding)");
  check_f32(logits, "logits");
  gemm_->matmul({x, true}, {w, true}, logits, {}, stream_);
}

}  // namespace fp8lab::cuda
#endif  // FP8LAB_HAVE_CUDA
