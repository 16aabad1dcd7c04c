// Registry rows: the elementwise ops, the reductions and AdamW.
#include <cmath>
#include <limits>

#include "backend_ops/op_rows_util.hpp"

namespace fp8lab::testing {
namespace {

// Odd sizes: vector kernels must handle their tails, and an offset-free start of every buffer
// is not all they see (the sizes are not multiples of 8).
constexpr std::int64_t kRows = 37, kCols = 173;

void add_fill_and_convert(std::vector<OpRow>& rows) {
  rows.push_back({"fill_zero", "f32_37x173", [](OpSession& s, std::uint64_t) {
                    const TensorView t = s.out(DType::f32, {kRows, kCols});
                    s.backend().fill_zero(t);
                    return outputs(OpOutput{"t", s.get(t), Bound::exact()});
                  }});
  for (const auto& [from, to, name] : {std::tuple{DType::f32, DType::bf16, "f32_to_bf16"},
                                       std::tuple{DType::bf16, DType::f32, "bf16_to_f32"}}) {
    // Init-captures: clang before 16 cannot capture a structured binding by name.
    rows.push_back({"convert", name, [from = from, to = to](OpSession& s, std::uint64_t seed) {
                      const TensorView src = s.in(normal(from, {kRows, kCols}, seed, 1));
                      const TensorView dst = s.out(to, {kRows, kCols});
                      s.backend().convert(src, dst);
                      return outputs(OpOutput{"dst", s.get(dst), Bound::exact()});
                    }});
  }
  // With a producer-fused amax: the slot must hold what the linear's own amax pass would.
  rows.push_back({"convert", "f32_to_bf16_amax_slot", [](OpSession& s, std::uint64_t seed) {
                    const TensorView src = s.in(normal(DType::f32, {kRows, kCols}, seed, 1, 3.f));
                    const TensorView dst = s.out(DType::bf16, {kRows, kCols});
                    const Buffer slots =
                        allocate_amax_slots(s.backend(), 1, MemoryKind::workspace, "slots");
                    s.backend().convert(src, dst, amax_slot(slots, 0, Fp8Format::e4m3));
                    return outputs(OpOutput{"dst", s.get(dst), Bound::exact()},
                                   OpOutput{"amax", meta_head(s, slots, 0), Bound::exact()});
                  }});
}

void add_adds_and_scale(std::vector<OpRow>& rows) {
  for (DType src_type : {DType::f32, DType::bf16}) {
    rows.push_back({"add_inplace", "f32_plus_" + std::string(dtype_name(src_type)),
                    [src_type](OpSession& s, std::uint64_t seed) {
                      const TensorView dst = s.in(normal(DType::f32, {kRows, kCols}, seed, 1));
                      const TensorView src = s.in(normal(src_type, {kRows, kCols}, seed, 2));
                      s.backend().add_inplace(dst, src);
                      return outputs(OpOutput{"dst", s.get(dst), Bound::exact()});
                    }});
  }
  // The fused residual add: the CPU's add is convert then add_inplace, so CUDA's one pass must
  // give those bits (the vector path here, the scalar one in the offset twin).
  for (DType b_type : {DType::f32, DType::bf16}) {
    rows.push_back({"add", "f32_plus_" + std::string(dtype_name(b_type)),
                    [b_type](OpSession& s, std::uint64_t seed) {
                      const TensorView a = s.in(normal(DType::f32, {kRows, kCols}, seed, 1));
                      const TensorView b = s.in(normal(b_type, {kRows, kCols}, seed, 2));
                      const TensorView out = s.out(DType::f32, {kRows, kCols});
                      s.backend().add(a, b, out);
                      return outputs(OpOutput{"out", s.get(out), Bound::exact()});
                    }});
  }
  rows.push_back({"scale_inplace", "f32_37x173", [](OpSession& s, std::uint64_t seed) {
                    const TensorView t = s.in(normal(DType::f32, {kRows, kCols}, seed, 1));
                    s.backend().scale_inplace(t, 0.3183f);
                    return outputs(OpOutput{"t", s.get(t), Bound::exact()});
                  }});
}

void add_reductions(std::vector<OpRow>& rows) {
  // f32, and bf16 (the bf16 gradients, PrecisionConfig::grads, whose norm the trainer takes):
  // each element widened exactly, so both are f64 sums of the same squares in another order.
  for (DType type : {DType::f32, DType::bf16}) {
    rows.push_back({"sum_of_squares", std::string(dtype_name(type)) + "_100003",
                    [type](OpSession& s, std::uint64_t seed) {
                      const TensorView t = s.in(normal(type, {100003}, seed, 1));
                      const double sum = s.backend().sum_of_squares(t);
                      return outputs(OpOutput{"sum", scalar_f64(sum), Bound::relative(1e-12)});
                    }});
  }
  for (DType type : {DType::f32, DType::bf16}) {
    rows.push_back({"all_finite",
                    std::string(dtype_name(type)) + std::string("_with_and_without_nan"),
                    [type](OpSession& s, std::uint64_t seed) {
                      HostTensor h = normal(type, {kRows, kCols}, seed, 1);
                      const TensorView clean = s.in(h);
                      const std::int64_t at = static_cast<std::int64_t>(seed % (kRows * kCols));
                      if (type == DType::f32)
                        h.as<float>()[at] = std::numeric_limits<float>::infinity();
                      else
                        h.as<std::uint16_t>()[at] = 0x7FC1;  // a NaN
                      const TensorView dirty = s.in(h);
                      HostTensor flags(DType::u8, {2});
                      flags.as<std::uint8_t>()[0] = s.backend().all_finite(clean) ? 1 : 0;
                      flags.as<std::uint8_t>()[1] = s.backend().all_finite(dirty) ? 1 : 0;
                      return outputs(OpOutput{"finite", std::move(flags), Bound::exact()});
                    }});
  }
}

void add_adamw(std::vector<OpRow>& rows) {
  // Three steps, the last with a working copy and its amax slot, weight decay and a clip; the
  // moments in fp32 and in bf16 (OptimConfig::moments), the gradients in fp32 and in bf16
  // (PrecisionConfig::grads, widened exactly): the same arithmetic on both backends.
  for (const auto& [moments_type, grads_type] : {std::pair{DType::f32, DType::f32},
                                                 {DType::bf16, DType::f32},
                                                 {DType::f32, DType::bf16},
                                                 {DType::bf16, DType::bf16}}) {
    const DType moments = moments_type, grads = grads_type;  // captured by name below
    rows.push_back(
        {"adamw_update",
         std::string(dtype_name(moments)) + "_moments_" +
             (grads == DType::bf16 ? "bf16_grads_" : "") + "37x173_three_steps",
         [moments, grads](OpSession& s, std::uint64_t seed) {
           const Shape shape{kRows, kCols};
           const TensorView p = s.in(normal(DType::f32, shape, seed, 1, 0.02f));
           const TensorView m = s.in(normal(moments, shape, seed, 2, 1e-3f));
           HostTensor v_host = normal(moments, shape, seed, 3, 1e-3f);
           for (std::int64_t i = 0; i < v_host.numel(); ++i) {  // v, a mean of squares: >= 0
             if (moments == DType::f32)
               v_host.as<float>()[i] = std::abs(v_host.as<float>()[i]);
             else
               v_host.as<std::uint16_t>()[i] &= 0x7FFF;
           }
           const TensorView v = s.in(v_host);
           const TensorView working = s.out(DType::bf16, shape);
           const Buffer slots =
               allocate_amax_slots(s.backend(), 1, MemoryKind::workspace, "slots");
           for (int t = 1; t <= 3; ++t) {
             const TensorView g = s.in(normal(grads, shape, seed, 10 + t, 0.1f));
             AdamWStep step;
             step.lr = 1e-3f * static_cast<float>(t);
             step.weight_decay = t == 3 ? 0.1f : 0.f;
             step.bias_correction1 = 1.f - std::pow(step.beta1, static_cast<float>(t));
             step.bias_correction2 = 1.f - std::pow(step.beta2, static_cast<float>(t));
             step.grad_scale = t == 2 ? 0.5f : 1.f;
             if (t < 3)
               s.backend().adamw_update(p, g, m, v, step);
             else
               s.backend().adamw_update(p, g, m, v, step, working,
                                        amax_slot(slots, 0, Fp8Format::e4m3));
           }
           return outputs(OpOutput{"param", s.get(p), Bound::exact()},
                          OpOutput{"m", s.get(m), Bound::exact()},
                          OpOutput{"v", s.get(v), Bound::exact()},
                          OpOutput{"working", s.get(working), Bound::exact()},
                          OpOutput{"working amax", meta_head(s, slots, 0), Bound::exact()});
         }});
  }
}

}  // namespace

void add_elementwise_rows(std::vector<OpRow>& rows) {
  add_fill_and_convert(rows);
  add_adds_and_scale(rows);
  add_reductions(rows);
  add_adamw(rows);
}

}  // namespace fp8lab::testing
