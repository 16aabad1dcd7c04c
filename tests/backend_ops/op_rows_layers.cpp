// Registry rows: embedding, RMSNorm (plain and fused), attention (training and cached), GELU.
#include <cmath>

#include "backend_ops/op_rows_util.hpp"

namespace fp8lab::testing {
namespace {

constexpr float kEps = 1e-5f;

void add_embedding(std::vector<OpRow>& rows) {
  constexpr std::int64_t kVocab = 301, kSeq = 50, kBatch = 3, kD = 72;
  rows.push_back({"embedding_forward", "V301_T50_B3_D72", [](OpSession& s, std::uint64_t seed) {
                    const TensorView tokens = s.in(token_ids(kBatch * kSeq, kVocab, seed, 1));
                    const TensorView wte = s.in(normal(DType::f32, {kVocab, kD}, seed, 2));
                    const TensorView wpe = s.in(normal(DType::f32, {kSeq, kD}, seed, 3));
                    const TensorView out = s.out(DType::f32, {kBatch * kSeq, kD});
                    s.backend().embedding_forward(tokens, wte, wpe, out);
                    return outputs(OpOutput{"out", s.get(out), Bound::exact()});
                  }});
  // Few distinct tokens, so many rows land on each: the per-token sums' order matters. The
  // gradients f32, or bf16 (PrecisionConfig::grads): both backends add each element's rows in
  // fp32 in row order onto the widened old value and round once, so bf16 is exact too.
  for (DType grads : {DType::f32, DType::bf16}) {
    rows.push_back(
        {"embedding_backward",
         std::string("V301_T50_B3_D72") + (grads == DType::bf16 ? "_bf16_grads" : ""),
         [grads](OpSession& s, std::uint64_t seed) {
           const TensorView tokens = s.in(token_ids(kBatch * kSeq, 7, seed, 1));
           const TensorView dout = s.in(normal(DType::f32, {kBatch * kSeq, kD}, seed, 2));
           const TensorView dwte = s.in(normal(grads, {kVocab, kD}, seed, 3));
           const TensorView dwpe = s.in(normal(grads, {kSeq, kD}, seed, 4));
           s.backend().embedding_backward(tokens, dout, dwte, dwpe);
           return outputs(OpOutput{"dwte", s.get(dwte), Bound::exact()},
                          OpOutput{"dwpe", s.get(dwpe), Bound::exact()});
         }});
  }
}

// RMSNorm over [kRows, kD]: f32 input (the residual stream), bf16 output (a linear's x).
constexpr std::int64_t kRows = 37, kD = 200;

// rstd: f64 sums in another order, then one f32 rounding: an ulp apart. y and the bf16 copies
// follow rstd; dw sums f32 partials in another order.
std::vector<OpOutput> norm_outputs(OpSession& s, const TensorView& y, const TensorView& rstd) {
  return outputs(OpOutput{"y", s.get(y), bf16_rounding()},
                 OpOutput{"rstd", s.get(rstd), Bound::ulp(1)});
}

// The backward's inputs, rstd from this backend's own forward (as in the model).
struct NormBackward {
  TensorView x, w, rstd, dy, dx, dw;
};

NormBackward norm_backward_inputs(OpSession& s, std::uint64_t seed, DType dw_type = DType::f32) {
  NormBackward n;
  n.x = s.in(normal(DType::f32, {kRows, kD}, seed, 1));
  n.w = s.in(normal(DType::f32, {kD}, seed, 2));
  n.rstd = s.out(DType::f32, {kRows});
  s.backend().rmsnorm_forward(n.x, n.w, kEps, s.out(DType::bf16, {kRows, kD}), n.rstd);
  n.dy = s.in(normal(DType::bf16, {kRows, kD}, seed, 3));
  n.dx = s.in(normal(DType::f32, {kRows, kD}, seed, 4));
  n.dw = s.in(normal(dw_type, {kD}, seed, 5));
  return n;
}

// dw: f32 partial sums in another order; a bf16 dw (PrecisionConfig::grads) then rounds once on
// each backend, on either side of a boundary where the sums differ.
Bound norm_dw_bound(DType dw_type) {
  return dw_type == DType::bf16 ? bf16_rounding() : Bound::relative(1e-4);
}

void add_rmsnorm(std::vector<OpRow>& rows) {
  rows.push_back({"rmsnorm_forward", "M37_D200_f32_to_bf16", [](OpSession& s, std::uint64_t seed) {
                    const TensorView x = s.in(normal(DType::f32, {kRows, kD}, seed, 1));
                    const TensorView w = s.in(normal(DType::f32, {kD}, seed, 2));
                    const TensorView y = s.out(DType::bf16, {kRows, kD});
                    const TensorView rstd = s.out(DType::f32, {kRows});
                    s.backend().rmsnorm_forward(x, w, kEps, y, rstd);
                    return norm_outputs(s, y, rstd);
                  }});
  rows.push_back(
      {"add_rmsnorm_forward", "M37_D200_amax_slot", [](OpSession& s, std::uint64_t seed) {
         const TensorView x = s.in(normal(DType::f32, {kRows, kD}, seed, 1));
         const TensorView branch = s.in(normal(DType::bf16, {kRows, kD}, seed, 2));
         const TensorView w = s.in(normal(DType::f32, {kD}, seed, 3));
         const TensorView sum = s.out(DType::f32, {kRows, kD});
         const TensorView y = s.out(DType::bf16, {kRows, kD});
         const TensorView rstd = s.out(DType::f32, {kRows});
         const Buffer slots = allocate_amax_slots(s.backend(), 1, MemoryKind::workspace, "slots");
         s.backend().add_rmsnorm_forward(x, branch, sum, w, kEps, y, rstd,
                                         amax_slot(slots, 0, Fp8Format::e4m3));
         std::vector<OpOutput> out = norm_outputs(s, y, rstd);
         out.push_back({"sum", s.get(sum), Bound::exact()});
         out.push_back({"amax is max|y|", amax_describes(s, slots, 0, s.get(y)), Bound::exact()});
         return out;
       }});
  for (DType dw_type : {DType::f32, DType::bf16}) {
    const std::string grads = dw_type == DType::bf16 ? "_bf16_grads" : "";
    for (GradWrite write : {GradWrite::accumulate, GradWrite::overwrite}) {
      const bool acc = write == GradWrite::accumulate;
      rows.push_back({"rmsnorm_backward",
                      std::string(acc ? "M37_D200_dw_accumulate" : "M37_D200_dw_overwrite") + grads,
                      [write, dw_type](OpSession& s, std::uint64_t seed) {
                        const NormBackward n = norm_backward_inputs(s, seed, dw_type);
                        s.backend().rmsnorm_backward(n.x, n.w, n.rstd, n.dy, n.dx, n.dw, write);
                        return outputs(OpOutput{"dx", s.get(n.dx), f32_reordered()},
                                       OpOutput{"dw", s.get(n.dw), norm_dw_bound(dw_type)});
                      }});
    }
  }
  for (DType dw_type : {DType::f32, DType::bf16}) {
    rows.push_back(
        {"rmsnorm_backward_and_convert",
         std::string("M37_D200_amax_slot") + (dw_type == DType::bf16 ? "_bf16_grads" : ""),
         [dw_type](OpSession& s, std::uint64_t seed) {
           const NormBackward n = norm_backward_inputs(s, seed, dw_type);
           const TensorView copy = s.out(DType::bf16, {kRows, kD});
           const Buffer slots = allocate_amax_slots(s.backend(), 1, MemoryKind::workspace, "slots");
           s.backend().rmsnorm_backward_and_convert(n.x, n.w, n.rstd, n.dy, n.dx, n.dw, copy,
                                                    amax_slot(slots, 0, Fp8Format::e5m2));
           HostTensor copied = s.get(copy);
           HostTensor agrees = amax_describes(s, slots, 0, copied);
           return outputs(OpOutput{"dx", s.get(n.dx), f32_reordered()},
                          OpOutput{"dw", s.get(n.dw), norm_dw_bound(dw_type)},
                          OpOutput{"dx copy", std::move(copied), bf16_rounding()},
                          OpOutput{"amax is max|dx copy|", std::move(agrees), Bound::exact()});
         }});
  }
}

struct AttentionCase {
  std::int64_t batch, seq, heads, head_dim;
  std::int64_t rows() const { return batch * seq; }
  std::int64_t d() const { return heads * head_dim; }
  std::string name() const { return fmt::format("B{}_T{}_H{}_hd{}", batch, seq, heads, head_dim); }
};

// The forward's outputs on this backend: the backward's inputs.
struct AttentionForward {
  TensorView qkv, out, lse;
};

AttentionForward attention_forward_on(OpSession& s, const AttentionCase& c, std::uint64_t seed) {
  AttentionForward f;
  f.qkv = s.in(normal(DType::bf16, {c.rows(), 3 * c.d()}, seed, 1));
  f.out = s.out(DType::bf16, {c.rows(), c.d()});
  f.lse = s.out(DType::f32, {c.batch, c.heads, c.seq});
  s.backend().attention_forward(f.qkv, static_cast<int>(c.heads), static_cast<int>(c.seq), f.out,
                                f.lse);
  return f;
}

void add_attention(std::vector<OpRow>& rows) {
  // Head dims 32, 64 and 128 (every family's set), a length that ends inside a tile.
  for (const AttentionCase c : {AttentionCase{2, 100, 2, 32}, AttentionCase{2, 100, 2, 64},
                                AttentionCase{1, 130, 2, 128}}) {
    // Another summation order and exp: the bounds of tests/cuda/test_cuda_attention.cpp.
    rows.push_back({"attention_forward", c.name(),
                    [c](OpSession& s, std::uint64_t seed) {
                      const AttentionForward f = attention_forward_on(s, c, seed);
                      return outputs(OpOutput{"out", s.get(f.out), Bound::relative(1e-2)},
                                     OpOutput{"lse", s.get(f.lse), Bound::relative(1e-3)});
                    },
                    true});
    rows.push_back({"attention_backward", c.name(),
                    [c](OpSession& s, std::uint64_t seed) {
                      const AttentionForward f = attention_forward_on(s, c, seed);
                      const TensorView dout = s.in(normal(DType::bf16, {c.rows(), c.d()}, seed, 2));
                      const TensorView dqkv = s.out(DType::bf16, {c.rows(), 3 * c.d()});
                      s.backend().attention_backward(f.qkv, f.out, f.lse, dout,
                                                     static_cast<int>(c.heads),
                                                     static_cast<int>(c.seq), dqkv);
                      return outputs(OpOutput{"dqkv", s.get(dqkv), Bound::relative(1e-2)});
                    },
                    true});
  }
  // Decoding: 5 new rows at position 40 of a 64-row cache whose first 40 rows are filled.
  rows.push_back(
      {"attention_cached_forward", "T64_pos40_n5_H2_hd64", [](OpSession& s, std::uint64_t seed) {
         constexpr std::int64_t kT = 64, kPos = 40, kN = 5, kH = 2, kDm = 128;
         const TensorView qkv = s.in(normal(DType::bf16, {kN, 3 * kDm}, seed, 1));
         const TensorView k = s.in(normal(DType::bf16, {kT, kDm}, seed, 2));
         const TensorView v = s.in(normal(DType::bf16, {kT, kDm}, seed, 3));
         const TensorView out = s.out(DType::bf16, {kN, kDm});
         s.backend().attention_cached_forward(qkv, kH, kPos, k, v, out);
         return outputs(OpOutput{"out", s.get(out), Bound::relative(1e-2)},
                        OpOutput{"k cache", s.get(k), Bound::exact()},
                        OpOutput{"v cache", s.get(v), Bound::exact()});
       }});
}

void add_gelu(std::vector<OpRow>& rows) {
  constexpr std::int64_t kM = 37, kF = 344;
  // The CUDA kernels evaluate tanh another way (docs/cuda-backend.md): bf16 roundings differ.
  rows.push_back({"gelu_forward", "M37_F344_bf16_amax_slot", [](OpSession& s, std::uint64_t seed) {
                    const TensorView x = s.in(normal(DType::bf16, {kM, kF}, seed, 1, 2.f));
                    const TensorView y = s.out(DType::bf16, {kM, kF});
                    const Buffer slots =
                        allocate_amax_slots(s.backend(), 1, MemoryKind::workspace, "slots");
                    s.backend().gelu_forward(x, y, amax_slot(slots, 0, Fp8Format::e4m3));
                    return outputs(OpOutput{"y", s.get(y), bf16_rounding()},
                                   OpOutput{"amax is max|y|", amax_describes(s, slots, 0, s.get(y)),
                                            Bound::exact()});
                  }});
  rows.push_back({"gelu_backward", "M37_F344_bf16_in_place", [](OpSession& s, std::uint64_t seed) {
                    const TensorView x = s.in(normal(DType::bf16, {kM, kF}, seed, 1, 2.f));
                    const TensorView dy = s.in(normal(DType::bf16, {kM, kF}, seed, 2));
                    s.backend().gelu_backward(x, dy, dy);
                    return outputs(OpOutput{"dx", s.get(dy), bf16_rounding()});
                  }});
}

}  // namespace

void add_layer_rows(std::vector<OpRow>& rows) {
  add_embedding(rows);
  add_rmsnorm(rows);
  add_attention(rows);
  add_gelu(rows);
}

}  // namespace fp8lab::testing
