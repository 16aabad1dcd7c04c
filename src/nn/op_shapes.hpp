// Shape checks shared by the backends' ops (src/cpu_backend/, src/cuda_backend/): what an op's
// arguments must look like whatever the device. Each backend adds its own dtype and device
// checks (f32 or bf16 activations on the CPU, bf16 attention on the GPU, ...).
#pragma once

#include "fp8lab/backend.hpp"
#include "fp8lab/tensor.hpp"

#include <cstdint>
#include <string_view>

namespace fp8lab::nn {

// A parameter gradient (PrecisionConfig::grads): f32, or bf16 that each op widens, adds its
// contribution to in f32 and rounds once (ErrorKind::dtype naming `what` otherwise).
void check_grad_dtype(const TensorView& grad, const char* what);

// tokens i32 [M], wte f32 [V, D], wpe f32 [T, D], acts [M, D] with M a multiple of T. For the
// backward (gradients true) wte and wpe are the gradients: f32 or bf16, both the same.
struct EmbeddingShape {
  std::int64_t rows, seq, d_model, vocab;
};
EmbeddingShape check_embedding_shapes(const TensorView& tokens, const TensorView& wte,
                                      const TensorView& wpe, const TensorView& acts,
                                      const char* acts_name, bool gradients = false);

// x [M, D]; w f32 [D]; rstd f32 [M]; other (y, dy or dx) with x's element count.
void check_norm_shapes(const TensorView& x, const TensorView& w, const TensorView& rstd,
                       const TensorView& other, const char* other_name);

// Backend::add_rmsnorm_forward: x and sum_out f32 (the residual stream), branch with their
// element count; sum_out and y overlap no other tensor of the op (its kernels read a row after
// writing it, which only disjoint tensors make the same as the unfused ops).
void check_add_rmsnorm(const TensorView& x, const TensorView& branch, const TensorView& sum_out,
                       const TensorView& y);

// Backend::rmsnorm_backward_and_convert's copy: dx_accum's element count, overlapping no other
// tensor of the op.
void check_norm_copy(const TensorView& x, const TensorView& dy, const TensorView& dx_accum,
                     const TensorView& dx_copy);

// Backend::linear_gelu_forward's pre and y: one element count, disjoint (the op writes both).
void check_linear_gelu(const TensorView& a, const TensorView& b, std::string_view op);

// qkv [B*T, 3*H*hd] split into heads over rows of seq_len; lse f32 [B, H, T].
struct HeadShape {
  std::int64_t batch, seq, heads, head_dim, d_model;
};
HeadShape check_attention_shapes(const TensorView& qkv, int n_heads, int seq_len,
                                 const TensorView& lse);

// AdamW: param f32, grad f32 or bf16, m and v f32 or bf16 (both the same), of one element count;
// working (when given) bf16 of that count; working_amax (when given) an e4m3 slot, and only with a
// working copy whose amax it is.
void check_adamw_args(const TensorView& param, const TensorView& grad, const TensorView& m,
                      const TensorView& v, const TensorView& working, AmaxSlot working_amax);

}  // namespace fp8lab::nn
