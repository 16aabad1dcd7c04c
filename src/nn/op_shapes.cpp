// Shape checks shared by the backends' ops (see nn/op_shapes.hpp).
#include "nn/op_shapes.hpp"

#include "fp8lab/error.hpp"

namespace fp8lab::nn {
namespace {

void check_disjoint(const TensorView& out, const char* out_name, const TensorView& other,
                    const char* other_name) {
  const auto a = reinterpret_cast<std::uintptr_t>(out.data);
  const auto b = reinterpret_cast<std::uintptr_t>(other.data);
  const bool overlap =
      out.nbytes() > 0 && other.nbytes() > 0 && a < b + other.nbytes() && b < a + out.nbytes();
  FP8LAB_CHECK_KIND(ErrorKind::invalid_argument, !overlap, "{} {} overlaps {} {}", out_name,
                    out.describe(), other_name, other.describe());
}

}  // namespace

void check_grad_dtype(const TensorView& grad, const char* what) {
  FP8LAB_CHECK_KIND(ErrorKind::dtype, grad.dtype == DType::f32 || grad.dtype == DType::bf16,
                    "{}: a parameter gradient is f32 or bf16, got {}", what, grad.describe());
}

EmbeddingShape check_embedding_shapes(const TensorView& tokens, const TensorView& wte,
                                      const TensorView& wpe, const TensorView& acts,
                                      const char* acts_name, bool gradients) {
  check_dtype(tokens, DType::i32, "tokens");
  if (gradients) {
    check_grad_dtype(wte, "embedding dwte");
    check_dtype(wpe, wte.dtype, "embedding dwpe");
  } else {
    check_dtype(wte, DType::f32, "wte");
    check_dtype(wpe, DType::f32, "wpe");
  }
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

void check_add_rmsnorm(const TensorView& x, const TensorView& branch, const TensorView& sum_out,
                       const TensorView& y) {
  check_dtype(x, DType::f32, "residual add x");
  check_dtype(sum_out, DType::f32, "residual add sum");
  FP8LAB_CHECK_KIND(ErrorKind::shape, branch.numel() == x.numel() && sum_out.numel() == x.numel(),
                    "residual add: x {} + branch {} -> sum {} differ in element count",
                    x.describe(), branch.describe(), sum_out.describe());
  check_disjoint(sum_out, "add_rmsnorm sum", x, "x");
  check_disjoint(sum_out, "add_rmsnorm sum", branch, "branch");
  check_disjoint(sum_out, "add_rmsnorm sum", y, "y");
  check_disjoint(y, "add_rmsnorm y", x, "x");
  check_disjoint(y, "add_rmsnorm y", branch, "branch");
}

void check_norm_copy(const TensorView& x, const TensorView& dy, const TensorView& dx_accum,
                     const TensorView& dx_copy) {
  FP8LAB_CHECK_KIND(ErrorKind::shape, dx_copy.numel() == dx_accum.numel(),
                    "rmsnorm backward: the copy {} of dx {} differs in element count",
                    dx_copy.describe(), dx_accum.describe());
  check_disjoint(dx_copy, "rmsnorm dx copy", x, "x");
  check_disjoint(dx_copy, "rmsnorm dx copy", dy, "dy");
  check_disjoint(dx_copy, "rmsnorm dx copy", dx_accum, "dx");
}

void check_linear_gelu(const TensorView& a, const TensorView& b, std::string_view op) {
  FP8LAB_CHECK_KIND(ErrorKind::shape, a.numel() == b.numel(),
                    "{}: the GELU's input {} and its output {} differ in element count", op,
                    a.describe(), b.describe());
  check_disjoint(a, "the GELU's input", b, "its output");
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
                      const TensorView& v, const TensorView& working, AmaxSlot working_amax) {
  check_dtype(param, DType::f32, "adamw param");
  check_grad_dtype(grad, "adamw grad");
  FP8LAB_CHECK_KIND(ErrorKind::dtype,
                    m.dtype == v.dtype && (m.dtype == DType::f32 || m.dtype == DType::bf16),
                    "adamw: moments m {} and v {} must both be f32 or both bf16", m.describe(),
                    v.describe());
  FP8LAB_CHECK_KIND(ErrorKind::invalid_argument, !working_amax || working.data != nullptr,
                    "adamw: an amax slot for the working copy, but no working copy (param {})",
                    param.describe());
  if (working_amax) check_amax_slot_format(working_amax, Fp8Format::e4m3, "adamw working copy");
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
