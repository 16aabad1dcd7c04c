// The producer-fused amax on the CPU reference backend (AmaxSlot in fp8lab/backend.hpp): each
// producer op leaves in its slot the amax of what it stored and that amax's scale, and an FP8
// linear handed the slot computes the same bytes, and reports a non-finite input with the same
// error, as when it reads its input for the amax itself.
#include "common/test_data.hpp"
#include "fp8lab/backend.hpp"
#include "fp8lab/fp8_scaling.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

namespace fp8lab {
namespace {

using testing::random_normal;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// max |v| over a bf16 tensor, spelled out independently of amax_cpu: NaN wins, then inf.
float amax_of_bf16(const TensorView& t) {
  float m = 0.f;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const float v = std::fabs(bf16_to_float(t.as<const std::uint16_t>()[i]));
    if (std::isnan(v)) return kNaN;
    m = std::fmax(m, v);
  }
  return m;
}

void set_bf16(const TensorView& t, std::int64_t i, float v) {
  t.as<std::uint16_t>()[i] = float_to_bf16(v);
}

class FusedAmaxCpu : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> be = make_cpu_backend();
  std::uint64_t seed = testing::fresh_seed();
  Buffer slots = allocate_amax_slots(*be, 2, MemoryKind::workspace, "test slots");
  AmaxSlot slot(Fp8Format f, int i = 0) { return amax_slot(slots, i, f); }

  // Runs `produce(out, slot)` with a slot and without; the outputs must be the same bytes and
  // the slot must hold out's amax and its scale for `f`.
  void expect_slot_is_amax_of_output(
      const char* what, Shape shape, Fp8Format f,
      const std::function<void(const TensorView&, AmaxSlot)>& produce) {
    HostTensor plain = testing::poisoned(DType::bf16, shape);
    HostTensor fused = testing::poisoned(DType::bf16, shape);
    produce(plain, {});
    produce(fused, slot(f));
    EXPECT_EQ(std::memcmp(plain.view().data, fused.view().data, plain.nbytes()), 0) << what;
    const float amax = amax_of_bf16(fused);
    const Fp8Meta& m = *slot(f).meta;
    if (std::isfinite(amax)) {
      const Fp8Scale s = scale_from_amax(amax, f);
      EXPECT_EQ(float_bits(m.amax), float_bits(amax)) << what;
      EXPECT_EQ(float_bits(m.scale), float_bits(s.scale)) << what;
      EXPECT_EQ(float_bits(m.inv_scale), float_bits(s.inv_scale)) << what;
      EXPECT_EQ(m.nonfinite, 0u) << what;
    } else {
      EXPECT_EQ(std::isnan(m.amax), std::isnan(amax)) << what;
      if (!std::isnan(amax)) {
        EXPECT_EQ(m.amax, amax) << what;
      }
      EXPECT_EQ(m.nonfinite, 1u) << what;
    }
  }
};

TEST_F(FusedAmaxCpu, ProducersLeaveTheAmaxOfWhatTheyStored) {
  const Shape shape{37, 24};
  for (float poison : {0.f, kNaN, kInf}) {
    const std::string tag = poison == 0.f ? "" : std::isnan(poison) ? " (NaN)" : " (inf)";
    HostTensor x = random_normal(DType::bf16, shape, seed, 1);
    HostTensor g = random_normal(DType::bf16, shape, seed, 2);
    HostTensor w = random_normal(DType::f32, {shape[1]}, seed, 3);
    HostTensor resid = random_normal(DType::f32, shape, seed, 4);
    HostTensor rstd(DType::f32, {shape[0]});
    if (poison != 0.f) {
      set_bf16(x, 100, poison);
      set_bf16(g, 200, poison);
      resid.as<float>()[300] = poison;
    }
    expect_slot_is_amax_of_output(
        ("rmsnorm" + tag).c_str(), shape, Fp8Format::e4m3,
        [&](const TensorView& y, AmaxSlot s) { be->rmsnorm_forward(x, w, 1e-5f, y, rstd, s); });
    expect_slot_is_amax_of_output(
        ("gelu" + tag).c_str(), shape, Fp8Format::e4m3,
        [&](const TensorView& y, AmaxSlot s) { be->gelu_forward(x, y, s); });
    expect_slot_is_amax_of_output(
        ("gelu backward" + tag).c_str(), shape, Fp8Format::e5m2,
        [&](const TensorView& dx, AmaxSlot s) { be->gelu_backward(x, g, dx, s); });
    expect_slot_is_amax_of_output(
        ("convert" + tag).c_str(), shape, Fp8Format::e5m2,
        [&](const TensorView& d, AmaxSlot s) { be->convert(resid, d, s); });
  }
}

// The attention's outputs: out (attn.proj's x) and all of dqkv (qkv's dY). A NaN or inf in a v
// value of the first token reaches every out row of its sequence; one in dout reaches dqkv.
TEST_F(FusedAmaxCpu, AttentionLeavesTheAmaxOfWhatItStored) {
  const int heads = 2, seq = 5;
  const std::int64_t rows = 2 * seq, d = 8;
  for (float poison : {0.f, kNaN, kInf}) {
    const std::string tag = poison == 0.f ? "" : std::isnan(poison) ? " (NaN)" : " (inf)";
    HostTensor qkv = random_normal(DType::bf16, {rows, 3 * d}, seed, 1);
    HostTensor dout = random_normal(DType::bf16, {rows, d}, seed, 2);
    HostTensor out(DType::bf16, {rows, d}), lse(DType::f32, {2, heads, seq});
    if (poison != 0.f) {
      set_bf16(qkv, 2 * d + 1, poison);           // v of token 0, head 0
      set_bf16(dout, (seq + 2) * d + 5, poison);  // token 2 of the second sequence, head 1
    }
    expect_slot_is_amax_of_output(("attention" + tag).c_str(), {rows, d}, Fp8Format::e4m3,
                                  [&](const TensorView& o, AmaxSlot s) {
                                    be->attention_forward(qkv, heads, seq, o, lse, s);
                                  });
    be->attention_forward(qkv, heads, seq, out, lse);
    expect_slot_is_amax_of_output(("attention backward" + tag).c_str(), {rows, 3 * d},
                                  Fp8Format::e5m2, [&](const TensorView& dqkv, AmaxSlot s) {
                                    be->attention_backward(qkv, out, lse, dout, heads, seq, dqkv,
                                                           s);
                                  });
  }
}

// fc-like linear: x [M, K] from an RMSNorm, dY [M, N] from a convert.
TEST_F(FusedAmaxCpu, LinearWithAProducerAmaxGivesTheSameBytes) {
  const std::int64_t m = 48, k = 32, n = 64;
  HostTensor x_in = random_normal(DType::f32, {m, k}, seed, 1);
  HostTensor norm_w = random_normal(DType::f32, {k}, seed, 2);
  HostTensor w = random_normal(DType::bf16, {n, k}, seed, 3, 0.2f);
  HostTensor dresid = random_normal(DType::f32, {m, n}, seed, 4, 1e-3f);
  HostTensor ln(DType::bf16, {m, k}), rstd(DType::f32, {m}), dy(DType::bf16, {m, n});
  HostTensor y[2], dx[2], dw[2];
  for (int fused = 0; fused < 2; ++fused) {
    const AmaxSlot xs = fused ? slot(Fp8Format::e4m3, 0) : AmaxSlot{};
    const AmaxSlot dys = fused ? slot(Fp8Format::e5m2, 1) : AmaxSlot{};
    y[fused] = testing::poisoned(DType::bf16, {m, n});
    dx[fused] = testing::poisoned(DType::bf16, {m, k});
    dw[fused] = HostTensor(DType::f32, {n, k});
    be->fill_zero(dw[fused]);
    be->rmsnorm_forward(x_in, norm_w, 1e-5f, ln, rstd, xs);
    auto ctx = be->linear_forward(LinearMode::fp8, ln, w, y[fused], "blk.mlp.fc", xs);
    be->convert(dresid, dy, dys);
    be->linear_backward(*ctx, dy, dx[fused], dw[fused], dys);
  }
  for (const auto& [t, what] : {std::pair{y, "y"}, {dx, "dx"}, {dw, "dw"}}) {
    EXPECT_EQ(std::memcmp(t[0].view().data, t[1].view().data, t[0].nbytes()), 0) << what;
  }
}

TEST_F(FusedAmaxCpu, NonFiniteInputsAreReportedAsWithoutTheSlot) {
  const std::int64_t m = 16, k = 32, n = 16;
  HostTensor x_in = random_normal(DType::f32, {m, k}, seed, 1);
  x_in.as<float>()[5 * k + 7] = kNaN;
  HostTensor norm_w = random_normal(DType::f32, {k}, seed, 2);
  HostTensor w = random_normal(DType::bf16, {n, k}, seed, 3);
  HostTensor ln(DType::bf16, {m, k}), rstd(DType::f32, {m}), y(DType::bf16, {m, n});
  std::string messages[2];
  for (int fused = 0; fused < 2; ++fused) {
    const AmaxSlot xs = fused ? slot(Fp8Format::e4m3) : AmaxSlot{};
    be->rmsnorm_forward(x_in, norm_w, 1e-5f, ln, rstd, xs);
    const Error e =
        testing::error_of([&] { be->linear_forward(LinearMode::fp8, ln, w, y, "blk.mlp.fc", xs); });
    EXPECT_EQ(e.kind(), ErrorKind::non_finite);
    messages[fused] = e.message();
  }
  EXPECT_NE(messages[1].find("'blk.mlp.fc.x'"), std::string::npos) << messages[1];
  EXPECT_EQ(messages[0], messages[1]);

  // dY with an inf, from a convert.
  HostTensor good_ln = random_normal(DType::bf16, {m, k}, seed, 4);
  HostTensor dresid = random_normal(DType::f32, {m, n}, seed, 5);
  dresid.as<float>()[3] = -kInf;
  HostTensor dy(DType::bf16, {m, n}), dx(DType::bf16, {m, k}), dw(DType::f32, {n, k});
  for (int fused = 0; fused < 2; ++fused) {
    const AmaxSlot dys = fused ? slot(Fp8Format::e5m2) : AmaxSlot{};
    auto ctx = be->linear_forward(LinearMode::fp8, good_ln, w, y, "blk.mlp.proj");
    be->convert(dresid, dy, dys);
    const Error e = testing::error_of([&] { be->linear_backward(*ctx, dy, dx, dw, dys); });
    EXPECT_EQ(e.kind(), ErrorKind::non_finite);
    messages[fused] = e.message();
  }
  EXPECT_NE(messages[1].find("'blk.mlp.proj.dy'"), std::string::npos) << messages[1];
  EXPECT_EQ(messages[0], messages[1]);
}

TEST_F(FusedAmaxCpu, ASlotFilledForTheOtherFormatIsRefused) {
  HostTensor x = random_normal(DType::bf16, {16, 16}, seed, 1);
  HostTensor w = random_normal(DType::bf16, {16, 16}, seed, 2);
  HostTensor y(DType::bf16, {16, 16});
  be->gelu_forward(x, y, slot(Fp8Format::e5m2));
  const Error e = testing::error_of(
      [&] { be->linear_forward(LinearMode::fp8, y, w, x, "blk.mlp.proj", slot(Fp8Format::e5m2)); });
  EXPECT_NE(e.message().find("blk.mlp.proj.x"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("e5m2"), std::string::npos) << e.message();
}

}  // namespace
}  // namespace fp8lab
