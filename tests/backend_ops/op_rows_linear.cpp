// Registry rows: the linear layer in every mode and FP8 recipe, the MLP's linear + GELU, the
// classifier (training and scoring) and the decoder's logits.
#include <fmt/format.h>

#include "backend_ops/op_rows_util.hpp"
#include "fp8lab/fp8_recipe.hpp"

namespace fp8lab::testing {
namespace {

struct LinearCase {
  std::string name;
  LinearMode mode;
  Fp8Options fp8;
  std::int64_t m, k, n;
  std::string cuda_refuses;
};

// bf16 at sizes that are multiples of 8 but of nothing larger; the FP8 recipes at sizes their
// groups divide (128 for blockwise); f32, the finite-difference reference, on the CPU alone.
std::vector<LinearCase> linear_cases() {
  return {
      {"bf16_M40_K72_N96", LinearMode::bf16, {}, 40, 72, 96, ""},
      {"fp8_tensorwise_M256_K384_N256",
       LinearMode::fp8,
       {Fp8Recipe::tensorwise, false},
       256,
       384,
       256,
       ""},
      {"fp8_tensorwise_bf16_wgrad",
       LinearMode::fp8,
       {Fp8Recipe::tensorwise, true},
       256,
       384,
       256,
       ""},
      {"fp8_rowwise_M256_K384_N256",
       LinearMode::fp8,
       {Fp8Recipe::rowwise, false},
       256,
       384,
       256,
       ""},
      {"fp8_blockwise_M256_K384_N256",
       LinearMode::fp8,
       {Fp8Recipe::blockwise, false},
       256,
       384,
       256,
       ""},
      {"f32_M12_K16_N20", LinearMode::f32, {}, 12, 16, 20, "f32"},
  };
}

// Another GEMM (cuBLASLt against OpenBLAS) over the same rounded operands: bf16 outputs within a
// rounding; dW (f32) sums the same products in another order, with FP8 operands' larger terms
// (the bounds of tests/cuda/test_cuda_linear.cpp and test_cuda_recipes.cpp).
Bound dw_bound(const LinearCase& c) {
  return c.mode == LinearMode::fp8 ? Bound::relative(5e-4) : Bound::relative(2e-5);
}

// A bf16 dW (PrecisionConfig::grads) accumulated into: bf16(dW0 + P) on both backends, one
// rounding of sums that differ by dw_bound, so also one bf16 rounding apart (bf16_rounding).
Bound bf16_dw_bound(const LinearCase& c) {
  return Bound::relative(bf16_rounding().value + dw_bound(c).value);
}

struct LinearInputs {
  TensorView x, w;
};

LinearInputs linear_inputs(OpSession& s, const LinearCase& c, std::uint64_t seed) {
  s.backend().set_fp8_options(c.fp8);
  const DType t = c.mode == LinearMode::f32 ? DType::f32 : DType::bf16;
  return {s.in(normal(t, {c.m, c.k}, seed, 1)), s.in(normal(t, {c.n, c.k}, seed, 2, 0.05f))};
}

void add_linear(std::vector<OpRow>& rows) {
  for (const LinearCase& c : linear_cases()) {
    const DType t = c.mode == LinearMode::f32 ? DType::f32 : DType::bf16;
    rows.push_back({"linear_forward", c.name,
                    [c, t](OpSession& s, std::uint64_t seed) {
                      const LinearInputs in = linear_inputs(s, c, seed);
                      const TensorView y = s.out(t, {c.m, c.n});
                      s.backend().linear_forward(c.mode, in.x, in.w, y, "registry.linear");
                      return outputs(OpOutput{"y", s.get(y), bf16_rounding()});
                    },
                    false, c.cuda_refuses});
    for (DType grads : {DType::f32, DType::bf16}) {
      // bf16 gradients are mixed compute's (PrecisionConfig::validate): not under f32.
      if (grads == DType::bf16 && c.mode == LinearMode::f32) continue;
      rows.push_back(
          {"linear_backward", c.name + (grads == DType::bf16 ? "_bf16_grads" : ""),
           [c, t, grads](OpSession& s, std::uint64_t seed) {
             const LinearInputs in = linear_inputs(s, c, seed);
             const TensorView y = s.out(t, {c.m, c.n});
             auto saved = s.backend().linear_forward(c.mode, in.x, in.w, y, "registry.linear");
             const TensorView dy = s.in(normal(t, {c.m, c.n}, seed, 3, 1e-3f));
             const TensorView dx = s.out(t, {c.m, c.k});
             const TensorView dw = s.in(normal(grads, {c.n, c.k}, seed, 4, 1e-3f));
             s.backend().linear_backward(*saved, dy, dx, dw);
             return outputs(
                 OpOutput{"dx", s.get(dx), bf16_rounding()},
                 OpOutput{"dw", s.get(dw), grads == DType::bf16 ? bf16_dw_bound(c) : dw_bound(c)});
           },
           false, c.cuda_refuses});
    }
  }
  for (const LinearCase& c : {linear_cases()[0], linear_cases()[1]}) {
    // The CUDA bf16 GEMM may take GELU before rounding the product (backend.hpp): a rounding.
    rows.push_back({"linear_gelu_forward", c.name, [c](OpSession& s, std::uint64_t seed) {
                      const LinearInputs in = linear_inputs(s, c, seed);
                      const TensorView pre = s.out(DType::bf16, {c.m, c.n});
                      const TensorView y = s.out(DType::bf16, {c.m, c.n});
                      s.backend().linear_gelu_forward(c.mode, in.x, in.w, pre, y, "registry.fc");
                      return outputs(OpOutput{"pre", s.get(pre), bf16_rounding()},
                                     OpOutput{"y", s.get(y), bf16_rounding()});
                    }});
  }
}

constexpr std::int64_t kD = 64;
constexpr int kIgnore = 3;

// The loss rows at one shape. The CUDA GEMMs take multiples of 8 (the model pads its vocabulary
// to 50304 and its rows come in whole sequences), so the odd shape is the CPU's alone and CUDA
// refuses it with the dimensions named; the even one, its last chunk short, runs on both.
void add_loss(std::vector<OpRow>& rows, std::int64_t m, std::int64_t vocab,
              const std::string& cuda_refuses) {
  const std::string shape = fmt::format("M{}_D64_V{}", m, vocab);
  // Training: chunks of 16 rows (the last one short), ignored targets, dx and dw. The CUDA
  // backend keeps the training logits in bf16 (docs/cuda-backend.md), so loss, dx and dw carry
  // their rounding. dw f32, or bf16 (PrecisionConfig::grads): rounded once per chunk on both
  // backends, where sums that differ may round to neighbours: at most one bf16 ulp (2^-8
  // relative) more per chunk.
  const double chunks = static_cast<double>((m + 15) / 16);
  for (DType grads : {DType::f32, DType::bf16}) {
    const Bound dw_bound =
        Bound::relative(1e-2 + (grads == DType::bf16 ? chunks * std::ldexp(1.0, -8) : 0.0));
    rows.push_back(
        {"cross_entropy", shape + "_chunk16_training" + (grads == DType::bf16 ? "_bf16_grads" : ""),
         [m, vocab, grads, dw_bound](OpSession& s, std::uint64_t seed) {
           const TensorView x = s.in(normal(DType::bf16, {m, kD}, seed, 1));
           const TensorView w = s.in(normal(DType::bf16, {vocab, kD}, seed, 2, 0.05f));
           const TensorView targets = s.in(token_ids(m, 8, seed, 3));
           const TensorView dx = s.out(DType::bf16, {m, kD});
           const TensorView dw = s.in(normal(grads, {vocab, kD}, seed, 4, 1e-3f));
           const LossSums sums = s.backend().cross_entropy(x, w, targets, kIgnore, 16,
                                                           1.f / static_cast<float>(m), dx, dw);
           return outputs(OpOutput{"loss sum", scalar_f64(sums.loss_sum), Bound::relative(2e-3)},
                          OpOutput{"counted", scalar_i64(sums.counted), Bound::exact()},
                          OpOutput{"dx", s.get(dx), Bound::relative(1e-2)},
                          OpOutput{"dw", s.get(dw), dw_bound});
         },
         false, cuda_refuses});
  }
  // Scoring: no gradients, f32 logits on both backends.
  rows.push_back(
      {"cross_entropy", shape + "_chunk16_scoring",
       [m, vocab](OpSession& s, std::uint64_t seed) {
         const TensorView x = s.in(normal(DType::bf16, {m, kD}, seed, 1));
         const TensorView w = s.in(normal(DType::bf16, {vocab, kD}, seed, 2, 0.05f));
         const TensorView targets = s.in(token_ids(m, vocab, seed, 3));
         const LossSums sums = s.backend().cross_entropy(x, w, targets, -1, 16, 1.f, {}, {});
         return outputs(OpOutput{"loss sum", scalar_f64(sums.loss_sum), Bound::relative(1e-6)},
                        OpOutput{"counted", scalar_i64(sums.counted), Bound::exact()});
       },
       false, cuda_refuses});
}

void add_lm_head(std::vector<OpRow>& rows, std::int64_t m, std::int64_t vocab,
                 const std::string& cuda_refuses) {
  rows.push_back({"lm_head_logits", fmt::format("M{}_D64_V{}", m, vocab),
                  [m, vocab](OpSession& s, std::uint64_t seed) {
                    const TensorView x = s.in(normal(DType::bf16, {m, kD}, seed, 1));
                    const TensorView w = s.in(normal(DType::bf16, {vocab, kD}, seed, 2, 0.05f));
                    const TensorView logits = s.out(DType::f32, {m, vocab});
                    s.backend().lm_head_logits(x, w, logits);
                    return outputs(OpOutput{"logits", s.get(logits), f32_reordered()});
                  },
                  false, cuda_refuses});
}

}  // namespace

void add_linear_and_loss_rows(std::vector<OpRow>& rows) {
  add_linear(rows);
  add_loss(rows, 45, 509, "must be multiples of 8");
  add_loss(rows, 56, 512, "");
  add_lm_head(rows, 5, 509, "must be multiples of 8");
  add_lm_head(rows, 8, 512, "");
}

}  // namespace fp8lab::testing
