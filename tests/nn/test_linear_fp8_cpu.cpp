// The fp8 policy of the CPU reference linear layer: accuracy against the bf16 policy, the saved
// operands, backward reading only what forward saved, and typed errors on bad input.
#include "common/test_data.hpp"
#include "common/tolerances.hpp"
#include "gemm/gemm.hpp"
#include "fp8lab/linear.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <tuple>

namespace fp8lab {
namespace {

using testing::error_of;

using testing::fresh_seed;
using testing::poisoned;
using testing::relative_frobenius;

using Inputs = testing::LinearOperands;

Inputs normal_inputs(std::int64_t m, std::int64_t k, std::int64_t n) {
  return testing::linear_operands(m, k, n, fresh_seed());
}

// One layer's forward + backward, keeping the saved state for inspection.
struct Fp8Run {
  LinearSavedHost saved;
  LinearScratchHost scratch;
  HostTensor y, dx, dw;
  LinearBackwardStats stats;
  Fp8Run(LinearPrecision p, std::int64_t m, std::int64_t k, std::int64_t n)
      : saved(p, m, k, n),
        scratch(p, m, n),
        y(poisoned(DType::bf16, {m, n})),
        dx(poisoned(DType::bf16, {m, k})),
        dw(poisoned(DType::f32, {n, k})) {}
};

void forward(Fp8Run& r, LinearPrecision p, const Inputs& in) {
  linear_forward_cpu({p, "blocks.0.mlp.fc"}, in.x, in.w, r.y, r.saved.saved);
}
void backward(Fp8Run& r, LinearPrecision p, const Inputs& in) {
  r.stats = linear_backward_cpu({p, "blocks.0.mlp.fc"}, r.saved.saved, in.dy, r.dx, r.dw,
                                r.scratch.scratch);
}

class Fp8LinearShapes : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(Fp8LinearShapes, YdXdWAreWithinTheDocumentedBoundsOfTheBf16Policy) {
  const auto [m, k, n] = GetParam();
  const Inputs in = normal_inputs(m, k, n);
  Fp8Run ref(LinearPrecision::bf16, m, k, n), f8(LinearPrecision::fp8, m, k, n);
  forward(ref, LinearPrecision::bf16, in);
  backward(ref, LinearPrecision::bf16, in);
  forward(f8, LinearPrecision::fp8, in);
  backward(f8, LinearPrecision::fp8, in);
  const double ey = relative_frobenius(f8.y, ref.y), edx = relative_frobenius(f8.dx, ref.dx),
               edw = relative_frobenius(f8.dw, ref.dw);
  std::fprintf(stderr, "[measured] fp8 vs bf16 linear %dx%dx%d: y %.4f, dX %.4f, dW %.4f\n", m, k,
               n, ey, edx, edw);
  EXPECT_LT(ey, tolerances::kFp8LinearYVsBf16);
  EXPECT_LT(edx, tolerances::kFp8LinearDxVsBf16);
  EXPECT_LT(edw, tolerances::kFp8LinearDwVsBf16);
  EXPECT_GT(ey, tolerances::kFp8LinearYVsBf16Floor);  // not vacuous: the fp8 path really ran
}

INSTANTIATE_TEST_SUITE_P(MultiplesOf16, Fp8LinearShapes,
                         ::testing::Values(std::make_tuple(16, 16, 16),
                                           std::make_tuple(256, 512, 384),
                                           std::make_tuple(48, 1024, 80)));

bool same_bytes(const TensorView& a, const TensorView& b) {
  return a.shape == b.shape && a.dtype == b.dtype && std::memcmp(a.data, b.data, a.nbytes()) == 0;
}

TEST(Fp8Linear, SavedOperandsAreTheForwardCastsInBothLayouts) {
  const std::int64_t m = 64, k = 96, n = 32;
  const Inputs in = normal_inputs(m, k, n);
  Fp8Run r(LinearPrecision::fp8, m, k, n);
  forward(r, LinearPrecision::fp8, in);
  const LinearSaved& s = r.saved.saved;
  for (const auto& [src, q, qt, scale, counts, name] :
       {std::make_tuple(&in.x, s.xq, s.xq_t, s.x_scale, s.x_counts, "x"),
        std::make_tuple(&in.w, s.wq, s.wq_t, s.w_scale, s.w_counts, "w")}) {
    SCOPED_TRACE(name);
    const Fp8Scale expected = current_scale_cpu(*src, Fp8Format::e4m3, name);
    EXPECT_EQ(scale.scale, expected.scale);
    EXPECT_EQ(scale.inv_scale, expected.inv_scale);
    HostTensor want(DType::e4m3, src->shape()),
        want_t(DType::e4m3, {src->shape()[1], src->shape()[0]});
    EXPECT_EQ(quantize_cpu(*src, expected.scale, Fp8Format::e4m3, want), counts);
    transpose_fp8_cpu(want, want_t);
    EXPECT_TRUE(same_bytes(q, want));
    EXPECT_TRUE(same_bytes(qt, want_t));
  }
}

TEST(Fp8Linear, BackwardReadsOnlyTheSavedCastsAndItsOwnE5M2CastOfDy) {
  const std::int64_t m = 48, k = 64, n = 32;
  const Inputs in = normal_inputs(m, k, n);
  Fp8Run r(LinearPrecision::fp8, m, k, n);
  forward(r, LinearPrecision::fp8, in);
  const HostTensor saved_xq_t = [&] {  // a copy, to show backward leaves the saved bytes alone
    HostTensor c(DType::e4m3, {k, m});
    std::memcpy(c.as<std::uint8_t>(), r.saved.xq_t.as<std::uint8_t>(), c.nbytes());
    return c;
  }();
  // NaN into x and W after forward: a backward that re-cast them would throw non_finite.
  testing::poison(in.x);
  testing::poison(in.w);
  backward(r, LinearPrecision::fp8, in);
  EXPECT_TRUE(same_bytes(saved_xq_t, r.saved.xq_t));

  // dX and dW are exactly the TN GEMMs of an independent E5M2 cast of dY with the saved operands.
  const Fp8Scale sdy = current_scale_cpu(in.dy, Fp8Format::e5m2, "dy");
  EXPECT_EQ(r.stats.dy_scale.scale, sdy.scale);
  HostTensor dyq(DType::e5m2, {m, n}), dyq_t(DType::e5m2, {n, m});
  EXPECT_EQ(quantize_cpu(in.dy, sdy.scale, Fp8Format::e5m2, dyq), r.stats.dy_counts);
  transpose_fp8_cpu(dyq, dyq_t);
  EXPECT_TRUE(same_bytes(dyq, r.scratch.dyq));
  EXPECT_TRUE(same_bytes(dyq_t, r.scratch.dyq_t));
  const LinearSaved& s = r.saved.saved;
  HostTensor dx = poisoned(DType::bf16, {m, k}), dw = poisoned(DType::f32, {n, k});
  gemm_tn_cpu(dyq, s.wq_t, dx, {sdy.inv_scale, s.w_scale.inv_scale, false});
  gemm_tn_cpu(dyq_t, s.xq_t, dw, {sdy.inv_scale, s.x_scale.inv_scale, false});
  EXPECT_TRUE(same_bytes(dx, r.dx));
  EXPECT_TRUE(same_bytes(dw, r.dw));
}

TEST(Fp8Linear, AccumulateDwAddsToTheExistingGradient) {
  const std::int64_t m = 32, k = 48, n = 16;
  const Inputs in = normal_inputs(m, k, n);
  Fp8Run r(LinearPrecision::fp8, m, k, n);
  forward(r, LinearPrecision::fp8, in);
  backward(r, LinearPrecision::fp8, in);
  const HostTensor dw0 = testing::random_normal(DType::f32, {n, k}, fresh_seed(), 9);
  HostTensor dw(DType::f32, {n, k}), dx = poisoned(DType::bf16, {m, k});
  std::memcpy(dw.as<float>(), dw0.as<float>(), dw.nbytes());
  linear_backward_cpu({LinearPrecision::fp8, "fc"}, r.saved.saved, in.dy, dx, dw, r.scratch.scratch,
                      /*accumulate_dw=*/true);
  for (std::int64_t i = 0; i < dw.numel(); ++i)
    ASSERT_EQ(dw.as<float>()[i], dw0.as<float>()[i] + r.dw.as<float>()[i]) << i;
}

TEST(LinearErrors, NonFiniteInputsAreErrorsNamingTheTensorInBothPolicies) {
  const std::int64_t m = 32, k = 16, n = 16;
  for (const LinearPrecision p : {LinearPrecision::bf16, LinearPrecision::fp8}) {
    for (const char* which : {"x", "w", "dy"}) {
      SCOPED_TRACE(std::string(linear_precision_name(p)) + " " + which);
      const Inputs in = normal_inputs(m, k, n);
      const HostTensor& bad = which[0] == 'x' ? in.x : which[0] == 'w' ? in.w : in.dy;
      bad.as<std::uint16_t>()[5] = float_to_bf16(std::numeric_limits<float>::quiet_NaN());
      Fp8Run r(p, m, k, n);
      const Error e = error_of([&] {
        forward(r, p, in);
        backward(r, p, in);
      });
      EXPECT_EQ(e.kind(), ErrorKind::non_finite);
      EXPECT_NE(std::string(e.what()).find(std::string("'blocks.0.mlp.fc.") + which + "'"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(LinearErrors, MisalignedFp8ShapesAndMismatchedPoliciesAreRejected) {
  const Inputs in = normal_inputs(40, 16, 16);  // M = 40 is not a multiple of 16
  Fp8Run r(LinearPrecision::fp8, 40, 16, 16);
  const Error e = error_of([&] { forward(r, LinearPrecision::fp8, in); });
  EXPECT_EQ(e.kind(), ErrorKind::shape);
  EXPECT_NE(std::string(e.what()).find("M=40"), std::string::npos) << e.what();
  Fp8Run bf16_state(LinearPrecision::bf16, 40, 16, 16);
  EXPECT_EQ(error_of([&] { forward(bf16_state, LinearPrecision::fp8, in); }).kind(),
            ErrorKind::invalid_argument);
  HostTensor wrong_w = testing::random_normal(DType::bf16, {16, 24}, fresh_seed(), 1);
  EXPECT_EQ(error_of([&] {
              linear_forward_cpu({LinearPrecision::bf16, "fc"}, in.x, wrong_w, bf16_state.y,
                                 bf16_state.saved.saved);
            }).kind(),
            ErrorKind::shape);
}

}  // namespace
}  // namespace fp8lab
