// Shape checks shared by the backends' ops (see nn/op_shapes.hpp).
#include "nn/op_shapes.hpp"

#include "fp8lab/error.hpp"

namespace fp8lab::nn {

EmbeddingShape check_embedding_shapes(const TensorView& tokens, const TensorView& wte,
                                      const TensorView& wpe, const TensorView& acts,
                                      const char* acts_name) {
  check_dtype(tokens, DType::i32, "tokens");
  check_dtype(wte, DType::f32, "wte");
  check_dtype(wpe, DType::f32, "wpe");
  check_rank(wte, 2, "wte");
  check_rank(wpe, 2, "wpe");
  check_rank(acts, 2, acts_name);
  const std::int64_t d = wte.shape[1];
  FP8LAB_CHECK_KIND(ErrorKind::shape,
                    wpe.shape[1] == d && acts.shape[1] == d && acts.shape[0] == tokens.numel() &&
                        tokens.numel() % wpe.shape[0] == 0,
                    "embedding: tokens {}, wte {}, wpe {}, {} {} do not fit [M], [V, D], [T, D], "
                    "[M, D] with M a multiple of T",
                    tokens.describe(), wte.describe(), wpe.describe(), acts_name, acts.describe());
  return {tokens.numel(), wpe.shape[0], d, wte.shape[0]};
}

void check_norm_shapes(const TensorView& x, const TensorView& w, const TensorView& rstd,
                       const TensorView& other, const char* other_name) {
  check_rank(x, 2, "rmsnorm x");
  check_dtype(w, DType::f32, "rmsnorm weight");
  check_dtype(rstd, DType::f32, "rmsnorm rstd");
  FP8LAB_CHECK_KIND(
      ErrorKind::shape,
      w.numel() == x.shape[1] && rstd.numel() == x.shape[0] && other.numel() == x.numel(),
      "rmsnorm: x {}, weight {}, rstd {}, {} {} do not fit [M, D], [D], [M], [M, D]", x.describe(),
      w.describe(), rstd.describe(), other_name, other.describe());
}

HeadShape check_attention_shapes(const TensorView& qkv, int n_heads, int seq_len,
                                 const TensorView& lse) {
  check_rank(qkv, 2, "attention qkv");
  check_dtype(lse, DType::f32, "attention lse");
  const std::int64_t m = qkv.shape[0], three_d = qkv.shape[1];
  FP8LAB_CHECK_KIND(ErrorKind::shape,
                    n_heads > 0 && seq_len > 0 && three_d % (3 * n_heads) == 0 && m % seq_len == 0,
                    "attention: qkv {} does not split into 3 x {} heads over rows of seq_len {}",
                    qkv.describe(), n_heads, seq_len);
  const HeadShape g{m / seq_len, seq_len, n_heads, three_d / 3 / n_heads, three_d / 3};
  FP8LAB_CHECK_KIND(ErrorKind::shape, lse.numel() == g.batch * g.heads * g.seq,
                    "attention: lse {} is not [B={}, H={}, T={}]", lse.describe(), g.batch, g.heads,
                    g.seq);
  return g;
}

void check_adamw_args(const TensorView& param, const TensorView& grad, const TensorView& m,
                      const TensorView& v, const TensorView& working) {
  for (const TensorView* t : {&param, &grad, &m, &v}) check_dtype(*t, DType::f32, "adamw tensor");
  FP8LAB_CHECK_KIND(
      ErrorKind::shape,
      grad.numel() == param.numel() && m.numel() == param.numel() && v.numel() == param.numel(),
      "adamw: param {}, grad {}, m {}, v {} differ in size", param.describe(), grad.describe(),
      m.describe(), v.describe());
  if (working.data == nullptr) return;
  check_dtype(working, DType::bf16, "adamw working copy");
  FP8LAB_CHECK_KIND(ErrorKind::shape, working.numel() == param.numel(),
                    "adamw: working copy {} does not match param {}", working.describe(),
                    param.describe());
}

}  // namespace fp8lab::nn
