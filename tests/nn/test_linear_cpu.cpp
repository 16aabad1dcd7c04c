// The CPU reference linear layer: gradients by finite differences (bf16 policy), the fp8 policy
// within documented bounds of the bf16 policy, the saved operands, and errors on bad input.
#include "common/test_data.hpp"
#include "common/tolerances.hpp"
#include "fp8lab/linear.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>

namespace fp8lab {
namespace {

using testing::fresh_seed;
using testing::poisoned;
using testing::relative_frobenius;

struct LinearRun {
  HostTensor y, dx, dw;
  LinearBackwardStats stats;
};

// Forward then backward of one policy on (x, w, dy); outputs poisoned first.
LinearRun run_linear(LinearPrecision p, const HostTensor& x, const HostTensor& w,
                     const HostTensor& dy) {
  const std::int64_t m = x.shape()[0], k = x.shape()[1], n = w.shape()[0];
  const LinearConfig config{p, "test.fc"};
  LinearSavedHost saved(p, m, k, n);
  LinearScratchHost scratch(p, m, n);
  LinearRun r{poisoned(DType::bf16, {m, n}),
              poisoned(DType::bf16, {m, k}),
              poisoned(DType::f32, {n, k}),
              {}};
  linear_forward_cpu(config, x, w, r.y, saved.saved);
  r.stats = linear_backward_cpu(config, saved.saved, dy, r.dx, r.dw, scratch.scratch);
  return r;
}

// L(x, W) = sum_ij G_ij y_ij in double, from the bf16 policy's forward.
double loss_of(const HostTensor& x, const HostTensor& w, const std::vector<double>& g) {
  const std::int64_t m = x.shape()[0], k = x.shape()[1], n = w.shape()[0];
  LinearSavedHost saved(LinearPrecision::bf16, m, k, n);
  HostTensor y = poisoned(DType::bf16, {m, n});
  linear_forward_cpu({LinearPrecision::bf16, "fd"}, x, w, y, saved.saved);
  const std::vector<double> yv = testing::to_f64(y);
  double loss = 0;
  for (std::size_t i = 0; i < yv.size(); ++i) loss += g[i] * yv[i];
  return loss;
}

// Central differences of L over every element of `param` (x or W, bf16), with step h. The
// perturbed values are rounded to bf16, so the quotient divides by the step actually taken.
std::vector<double> finite_difference_grad(HostTensor& param, double h,
                                           const std::function<double()>& loss) {
  std::vector<double> grad(static_cast<std::size_t>(param.numel()));
  std::uint16_t* p = param.as<std::uint16_t>();
  for (std::int64_t i = 0; i < param.numel(); ++i) {
    const std::uint16_t original = p[i];
    const float v = bf16_to_float(original);
    p[i] = float_to_bf16(static_cast<float>(v + h));
    const double up = bf16_to_float(p[i]), loss_up = loss();
    p[i] = float_to_bf16(static_cast<float>(v - h));
    const double down = bf16_to_float(p[i]), loss_down = loss();
    p[i] = original;
    grad[static_cast<std::size_t>(i)] = (loss_up - loss_down) / (up - down);
  }
  return grad;
}

// The layer is linear in x and in W, so central differences carry no truncation error: with small
// integer data every y, dX and dW is an integer bf16 holds exactly (|y| <= K*16 = 48, |dX| <= N*16
// = 112, |dW| <= M*16 = 80, all below 256), the loss and the quotient are exact, and the backward
// must equal the finite differences exactly.
TEST(LinearBf16Gradients, EqualFiniteDifferencesExactlyOnSmallIntegerData) {
  const std::int64_t m = 5, k = 3, n = 7;
  const std::uint64_t seed = fresh_seed();
  auto random_ints = [&](Shape s, std::uint64_t stream) {
    HostTensor t(DType::bf16, s);
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      const int v =
          static_cast<int>(random_u32(seed, stream, static_cast<std::uint64_t>(i)) % 9) - 4;
      t.as<std::uint16_t>()[i] = float_to_bf16(static_cast<float>(v == 0 ? 1 : v));
    }
    return t;
  };
  HostTensor x = random_ints({m, k}, 1), w = random_ints({n, k}, 2);
  const HostTensor dy = random_ints({m, n}, 3);
  const std::vector<double> g = testing::to_f64(dy);
  const LinearRun r = run_linear(LinearPrecision::bf16, x, w, dy);
  const auto loss = [&] { return loss_of(x, w, g); };
  EXPECT_EQ(finite_difference_grad(x, 1.0, loss), testing::to_f64(r.dx));
  EXPECT_EQ(finite_difference_grad(w, 1.0, loss), testing::to_f64(r.dw));
}

// On normal data y is rounded to bf16 (relative 2^-8 at most), which the quotient divides by 2h; a
// large step is harmless because L is linear. The bound is in tolerances.hpp.
TEST(LinearBf16Gradients, MatchFiniteDifferencesOnNormalData) {
  const std::int64_t m = 12, k = 16, n = 20;
  const std::uint64_t seed = fresh_seed();
  HostTensor x = testing::random_normal(DType::bf16, {m, k}, seed, 1);
  HostTensor w = testing::random_normal(DType::bf16, {n, k}, seed, 2);
  const HostTensor dy = testing::random_normal(DType::bf16, {m, n}, seed, 3);
  const std::vector<double> g = testing::to_f64(dy);
  const LinearRun r = run_linear(LinearPrecision::bf16, x, w, dy);
  const auto loss = [&] { return loss_of(x, w, g); };
  const double dx_err =
      relative_frobenius(testing::to_f64(r.dx), finite_difference_grad(x, 2.0, loss));
  const double dw_err =
      relative_frobenius(testing::to_f64(r.dw), finite_difference_grad(w, 2.0, loss));
  std::fprintf(stderr, "[measured] bf16 finite differences: dX %.3g, dW %.3g\n", dx_err, dw_err);
  EXPECT_LT(dx_err, tolerances::kBf16GradVsFiniteDifferences);
  EXPECT_LT(dw_err, tolerances::kBf16GradVsFiniteDifferences);
}

}  // namespace
}  // namespace fp8lab
