// CudaBackend: embedding, RMSNorm, attention and GELU. Each op checks its views here (the .cu
// launchers see raw pointers only), takes scratch from the pool and checks the launch.
#if defined(FP8LAB_HAVE_CUDA)
#include <cstdio>

#include "core/cuda_check.hpp"
#include "cuda_attention/attention_kernels.hpp"  // cudnn_attention_unavailable
#include "cuda_backend/cuda_backend.hpp"
#include "cuda_backend/cuda_backend_internal.hpp"
#include "nn/op_shapes.hpp"

namespace fp8lab::cuda {
namespace {

// The shared shape checks (nn/op_shapes.hpp), plus the GPU's: device memory, the kernels' int
// sizes, bf16 attention with a head_dim the flash attention is built for.
struct EmbeddingGeometry {
  std::int64_t rows;
  int seq, d, vocab;
};

// The shared checks of both directions, and the GPU's: device memory, int sizes.
EmbeddingGeometry check_embedding_geometry(const nn::EmbeddingShape& e, const TensorView& tokens,
                                           const TensorView& acts, const char* acts_name) {
  check_device(tokens, Device::cuda, "tokens");
  elem_type(acts, acts_name);
  return {e.rows, to_int(e.seq, "seq_len"), to_int(e.d_model, "d_model"),
          to_int(e.vocab, "vocab")};
}

// The forward reads the f32 tables.
EmbeddingGeometry check_embedding_forward_args(const TensorView& tokens, const TensorView& wte,
                                               const TensorView& wpe, const TensorView& out) {
  const nn::EmbeddingShape e = nn::check_embedding_shapes(tokens, wte, wpe, out, "out");
  check_f32(wte, "wte");
  check_f32(wpe, "wpe");
  return check_embedding_geometry(e, tokens, out, "out");
}

// The backward adds into the tables' gradients: f32 or bf16, both the same
// (PrecisionConfig::grads).
EmbeddingGeometry check_embedding_backward_args(const TensorView& tokens, const TensorView& dout,
                                                const TensorView& dwte, const TensorView& dwpe) {
  const nn::EmbeddingShape e =
      nn::check_embedding_shapes(tokens, dwte, dwpe, dout, "dout", /*gradients=*/true);
  check_device(dwte, Device::cuda, "embedding dwte");
  check_device(dwpe, Device::cuda, "embedding dwpe");
  return check_embedding_geometry(e, tokens, dout, "dout");
}

void check_norm_args(const TensorView& x, const TensorView& w, const TensorView& rstd,
                     const TensorView& other, const char* other_name) {
  nn::check_norm_shapes(x, w, rstd, other, other_name);
  elem_type(x, "rmsnorm x");
  elem_type(other, other_name);
  check_f32(w, "rmsnorm weight");
  check_f32(rstd, "rmsnorm rstd");
}

// The backward's views; returns D as the kernels' int.
int check_norm_backward_args(const TensorView& x, const TensorView& w, const TensorView& rstd,
                             const TensorView& dy, const TensorView& dx_accum,
                             const TensorView& dw_accum) {
  check_norm_args(x, w, rstd, dy, "rmsnorm dy");
  check_norm_args(x, w, rstd, dx_accum, "rmsnorm dx");
  grad_type(dw_accum, "rmsnorm dw");
  check_shape(dw_accum, w.shape, "rmsnorm dw");
  return to_int(x.shape[1], "d_model");
}

struct HeadGeometry {
  int batch, seq, heads, head_dim;
};

HeadGeometry check_attention_args(const TensorView& qkv, int n_heads, int seq_len,
                                  const TensorView& lse) {
  const nn::HeadShape h = nn::check_attention_shapes(qkv, n_heads, seq_len, lse);
  check_bf16(qkv, "attention qkv (the CUDA attention is bf16)");
  check_f32(lse, "attention lse");
  const HeadGeometry g{to_int(h.batch, "batch"), seq_len, n_heads,
                       to_int(h.head_dim, "head_dim")};
  FP8LAB_CHECK_KIND(ErrorKind::invalid_argument, cuda_ops::attention_supports_head_dim(g.head_dim),
                    "attention: head_dim {} (d_model {} / {} heads) is not supported by the CUDA "
                    "flash attention (32, 64 or 128)",
                    g.head_dim, h.d_model, n_heads);
  return g;
}

}  // namespace

void CudaBackend::embedding_forward(const TensorView& tokens, const TensorView& wte,
                                    const TensorView& wpe, const TensorView& out) {
  OpTimer timer(*this, "embedding_forward");
  const EmbeddingGeometry g = check_embedding_forward_args(tokens, wte, wpe, out);
  cuda_ops::embedding_forward(tokens.as<const std::int32_t>(), wte.as<const float>(),
                              wpe.as<const float>(), out.data, elem_type(out, "out"), g.rows,
                              g.seq, g.d, g.vocab, flag_bad_token(), stream_);
  check_launch("embedding_forward", __FILE__, __LINE__);
}

void CudaBackend::embedding_backward(const TensorView& tokens, const TensorView& dout,
                                     const TensorView& dwte_accum, const TensorView& dwpe_accum) {
  OpTimer timer(*this, "embedding_backward");
  const EmbeddingGeometry g = check_embedding_backward_args(tokens, dout, dwte_accum, dwpe_accum);
  PoolBlock scratch(this, cuda_ops::embedding_backward_workspace_bytes(g.rows, g.vocab),
                    MemoryKind::workspace, "embedding backward sort");
  cuda_ops::embedding_backward(tokens.as<const std::int32_t>(), dout.data, elem_type(dout, "dout"),
                               dwte_accum.data, dwpe_accum.data,
                               grad_type(dwte_accum, "embedding dwte"), g.rows, g.seq, g.d, g.vocab,
                               scratch.get(), stream_);
  check_launch("embedding_backward", __FILE__, __LINE__);
}

void CudaBackend::rmsnorm_forward(const TensorView& x, const TensorView& w, float eps,
                                  const TensorView& y, const TensorView& rstd, AmaxSlot amax) {
  OpTimer timer(*this, "rmsnorm_forward");
  check_norm_args(x, w, rstd, y, "rmsnorm y");
  cuda_ops::rmsnorm_forward(x.data, elem_type(x, "x"), w.as<const float>(), eps, y.data,
                            elem_type(y, "y"), rstd.as<float>(), x.shape[0],
                            to_int(x.shape[1], "d_model"), stream_, amax_out(amax));
  check_launch("rmsnorm_forward", __FILE__, __LINE__);
}

void CudaBackend::rmsnorm_backward(const TensorView& x, const TensorView& w, const TensorView& rstd,
                                   const TensorView& dy, const TensorView& dx_accum,
                                   const TensorView& dw_accum, GradWrite dw_write) {
  OpTimer timer(*this, "rmsnorm_backward");
  const int d = check_norm_backward_args(x, w, rstd, dy, dx_accum, dw_accum);
  PoolBlock scratch(this, cuda_ops::rmsnorm_backward_workspace_bytes(x.shape[0], d),
                    MemoryKind::workspace, "rmsnorm backward partials");
  cuda_ops::rmsnorm_backward(x.data, elem_type(x, "x"), w.as<const float>(), rstd.as<const float>(),
                             dy.data, elem_type(dy, "dy"), dx_accum.data, elem_type(dx_accum, "dx"),
                             dw_accum.data, grad_type(dw_accum, "rmsnorm dw"),
                             dw_write == GradWrite::accumulate, x.shape[0], d, scratch.get(),
                             stream_);
  check_launch("rmsnorm_backward", __FILE__, __LINE__);
}

void CudaBackend::add_rmsnorm_forward(const TensorView& x, const TensorView& branch,
                                      const TensorView& sum_out, const TensorView& w, float eps,
                                      const TensorView& y, const TensorView& rstd, AmaxSlot amax) {
  OpTimer timer(*this, "add_rmsnorm_forward");
  nn::check_add_rmsnorm(x, branch, sum_out, y);
  check_norm_args(sum_out, w, rstd, y, "rmsnorm y");
  check_f32(x, "residual add x");
  cuda_ops::add_rmsnorm_forward(
      x.as<const float>(), branch.data, elem_type(branch, "residual add branch"),
      sum_out.as<float>(), w.as<const float>(), eps, y.data, elem_type(y, "y"), rstd.as<float>(),
      sum_out.shape[0], to_int(sum_out.shape[1], "d_model"), stream_, amax_out(amax));
  check_launch("add_rmsnorm_forward", __FILE__, __LINE__);
}

void CudaBackend::rmsnorm_backward_and_convert(const TensorView& x, const TensorView& w,
                                               const TensorView& rstd, const TensorView& dy,
                                               const TensorView& dx_accum,
                                               const TensorView& dw_accum,
                                               const TensorView& dx_copy, AmaxSlot copy_amax,
                                               GradWrite dw_write) {
  OpTimer timer(*this, "rmsnorm_backward_and_convert");
  const int d = check_norm_backward_args(x, w, rstd, dy, dx_accum, dw_accum);
  nn::check_norm_copy(x, dy, dx_accum, dx_copy);
  PoolBlock scratch(this, cuda_ops::rmsnorm_backward_workspace_bytes(x.shape[0], d),
                    MemoryKind::workspace, "rmsnorm backward partials");
  cuda_ops::rmsnorm_backward_and_convert(
      x.data, elem_type(x, "x"), w.as<const float>(), rstd.as<const float>(), dy.data,
      elem_type(dy, "dy"), dx_accum.data, elem_type(dx_accum, "dx"), dw_accum.data,
      grad_type(dw_accum, "rmsnorm dw"), dw_write == GradWrite::accumulate, dx_copy.data,
      elem_type(dx_copy, "dx copy"), x.shape[0], d, scratch.get(), stream_, amax_out(copy_amax));
  check_launch("rmsnorm_backward_and_convert", __FILE__, __LINE__);
}

void CudaBackend::note_attention_fallback(bool forward, int head_dim) {
  const AttentionKernels asked = kernels_.attention;
  // The family asked for in this direction (cudnn-forward asks for automatic's backward).
  const AttentionKernels wanted = attention_kernels_for(asked, forward);
  if (wanted == AttentionKernels::automatic) return;
  const AttentionKernels runs = forward ? cuda_ops::attention_forward_family(asked, head_dim)
                                        : cuda_ops::attention_backward_family(asked, head_dim);
  if (runs == wanted || !attention_fallbacks_noted_.insert({forward, head_dim}).second) return;
  if (wanted == AttentionKernels::cudnn && !cuda_ops::cudnn_attention_unavailable().empty()) {
    std::fprintf(stderr, "fp8lab: kernels.attention=%s: %s; running %s\n",
                 attention_kernels_name(asked), cuda_ops::cudnn_attention_unavailable().c_str(),
                 attention_kernels_name(runs));
    return;
  }
  std::fprintf(stderr,
               "fp8lab: kernels.attention=%s has no %s kernel for head dim %d here; running %s\n",
               attention_kernels_name(asked), forward ? "forward" : "backward", head_dim,
               attention_kernels_name(runs));
}

void CudaBackend::attention_forward(const TensorView& qkv, int n_heads, int seq_len,
                                    const TensorView& out, const TensorView& lse,
                                    AmaxSlot out_amax) {
  OpTimer timer(*this, "attention_forward");
  const HeadGeometry g = check_attention_args(qkv, n_heads, seq_len, lse);
  check_bf16(out, "attention out");
  check_shape(out, {qkv.shape[0], qkv.shape[1] / 3}, "attention out");
  note_attention_fallback(true, g.head_dim);
  const std::size_t bytes = cuda_ops::attention_workspace_bytes(true, kernels_.attention, g.batch,
                                                                g.seq, g.heads, g.head_dim);
  PoolBlock scratch;
  if (bytes > 0) scratch = PoolBlock(this, bytes, MemoryKind::workspace, "attention workspace");
  cuda_ops::attention_forward(qkv.data, out.data, lse.as<float>(), g.batch, g.seq, g.heads,
                              g.head_dim, stream_, amax_out(out_amax), kernels_.attention,
                              scratch.get());
  check_launch("attention_forward", __FILE__, __LINE__);
}

void CudaBackend::attention_backward(const TensorView& qkv, const TensorView& out,
                                     const TensorView& lse, const TensorView& dout, int n_heads,
                                     int seq_len, const TensorView& dqkv, AmaxSlot dqkv_amax) {
  OpTimer timer(*this, "attention_backward");
  const HeadGeometry g = check_attention_args(qkv, n_heads, seq_len, lse);
  for (const auto& [t, what] : {std::pair{&out, "attention out"}, {&dout, "attention dout"}}) {
    check_bf16(*t, what);
    check_shape(*t, {qkv.shape[0], qkv.shape[1] / 3}, what);
  }
  check_bf16(dqkv, "attention dqkv");
  check_shape(dqkv, qkv.shape, "attention dqkv");
  note_attention_fallback(false, g.head_dim);
  PoolBlock scratch(this,
                    cuda_ops::attention_workspace_bytes(false, kernels_.attention, g.batch, g.seq,
                                                        g.heads, g.head_dim),
                    MemoryKind::workspace, "attention backward workspace");
  cuda_ops::attention_backward(qkv.data, out.data, lse.as<const float>(), dout.data, dqkv.data,
                               g.batch, g.seq, g.heads, g.head_dim, scratch.get(), stream_,
                               kernels_.attention, amax_out(dqkv_amax));
  check_launch("attention_backward", __FILE__, __LINE__);
}

void CudaBackend::gelu_forward(const TensorView& x, const TensorView& y, AmaxSlot amax) {
  OpTimer timer(*this, "gelu_forward");
  const cuda_ops::ElemType xt = elem_type(x, "gelu x"), yt = elem_type(y, "gelu y");
  FP8LAB_CHECK_KIND(ErrorKind::shape, x.numel() == y.numel(), "gelu: x {} and y {} differ in size",
                    x.describe(), y.describe());
  if (x.numel() == 0 && !amax) return;
  cuda_ops::gelu_forward(x.data, xt, y.data, yt, x.numel(), stream_, amax_out(amax));
  check_launch("gelu_forward", __FILE__, __LINE__);
}

void CudaBackend::gelu_backward(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                AmaxSlot amax) {
  OpTimer timer(*this, "gelu_backward");
  const cuda_ops::ElemType xt = elem_type(x, "gelu x"), dyt = elem_type(dy, "gelu dy"),
                           dxt = elem_type(dx, "gelu dx");
  FP8LAB_CHECK_KIND(ErrorKind::shape, x.numel() == dy.numel() && x.numel() == dx.numel(),
                    "gelu backward: x {}, dy {}, dx {} differ in size", x.describe(),
                    dy.describe(), dx.describe());
  if (x.numel() == 0 && !amax) return;
  cuda_ops::gelu_backward(x.data, xt, dy.data, dyt, dx.data, dxt, x.numel(), stream_,
                          amax_out(amax));
  check_launch("gelu_backward", __FILE__, __LINE__);
}

}  // namespace fp8lab::cuda
#endif  // FP8LAB_HAVE_CUDA
