// The check that a fused producer (of an FP8 linear's x or dy) leaves a NaN / inf reported as the
// unfused sequence it replaces does: the same error from the linear, naming "<name>.x" /
// "<name>.dy". The fused ops' tests (test_cuda_fused_amax.cpp, test_cuda_add_rmsnorm.cpp) supply
// only the producers; the linears, their tensors and the comparison live here.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "cuda/cuda_test_util.hpp"
#include "fp8lab/backend.hpp"

namespace fp8lab::testing {

// x [m, k] goes into "blocks.0.mlp.fc", dy [m, n] back through "blocks.0.mlp.proj"; both
// linears use w [n, k].
struct NonFiniteLinearDims {
  std::int64_t m, k, n;
};

// Whether the unfused arm hands the linears the amax slot too: `handed` when the fusion under test
// is of the producer ops themselves (both arms fill the slot), `none` when it is the amax (the
// unfused linear reads the tensor for its own amax).
enum class UnfusedArmSlot { none, handed };

// Writes the linear's input `out` (x bf16 [m, k] or dy bf16 [m, n]) on `be`, the fused way or the
// unfused one, filling `slot` (e4m3 for x, e5m2 for dy; empty per UnfusedArmSlot) as it goes.
using LinearInputProducer =
    std::function<void(Backend& be, bool fused, const AmaxSlot& slot, const TensorView& out)>;

// Runs the forward (make_x, then linear_forward) and the backward (linear_forward of a finite x,
// make_dy, then linear_backward) in both arms; the producers must put a NaN or inf in their
// output. Expects the fused arm's errors to name the tensor and the unfused arm's to be the same
// text. Each run gets a fresh backend: a reported error ends a backend's step.
inline void expect_nonfinite_reported_alike(NonFiniteLinearDims d, std::uint64_t seed,
                                            UnfusedArmSlot unfused_slot,
                                            const LinearInputProducer& make_x,
                                            const LinearInputProducer& make_dy) {
  const std::int64_t m = d.m, k = d.k, n = d.n;
  // Streams from 100 up, clear of the ones the callers' producers draw from.
  const DeviceTensor w = to_device(random_normal(DType::bf16, {n, k}, seed, 100));
  const DeviceTensor good_x = to_device(random_normal(DType::bf16, {m, k}, seed, 101));
  const DeviceTensor x(DType::bf16, {m, k}), y(DType::bf16, {m, n}), dy(DType::bf16, {m, n});
  const DeviceTensor dx(DType::bf16, {m, k}), dw(DType::f32, {n, k});
  std::string x_error[2], dy_error[2];
  for (int fused = 0; fused < 2; ++fused) {
    const bool hand_slot = fused == 1 || unfused_slot == UnfusedArmSlot::handed;

    auto be = make_cuda_backend();
    Buffer s = allocate_amax_slots(*be, 1, MemoryKind::workspace, "slot");
    const AmaxSlot xs = hand_slot ? amax_slot(s, 0, Fp8Format::e4m3) : AmaxSlot{};
    make_x(*be, fused == 1, xs, x);
    auto ctx = be->linear_forward(LinearMode::fp8, x, w, y, "blocks.0.mlp.fc", xs);
    x_error[fused] = error_of([&] { be->synchronize(); }).message();

    auto be2 = make_cuda_backend();
    Buffer s2 = allocate_amax_slots(*be2, 1, MemoryKind::workspace, "slot");
    const AmaxSlot dys = hand_slot ? amax_slot(s2, 0, Fp8Format::e5m2) : AmaxSlot{};
    auto ctx2 = be2->linear_forward(LinearMode::fp8, good_x, w, y, "blocks.0.mlp.proj");
    make_dy(*be2, fused == 1, dys, dy);
    be2->linear_backward(*ctx2, dy, dx, dw, dys);
    dy_error[fused] = error_of([&] { be2->synchronize(); }).message();
  }
  EXPECT_NE(x_error[1].find("'blocks.0.mlp.fc.x'"), std::string::npos) << x_error[1];
  EXPECT_NE(dy_error[1].find("'blocks.0.mlp.proj.dy'"), std::string::npos) << dy_error[1];
  EXPECT_EQ(x_error[0], x_error[1]);
  EXPECT_EQ(dy_error[0], dy_error[1]);
}

}  // namespace fp8lab::testing
