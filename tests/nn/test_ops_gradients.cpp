// Finite-difference checks of every CPU op's backward, in fp32, on small odd shapes.
#include "common/test_data.hpp"
#include "fp8lab/backend.hpp"
#include "nn/gradcheck.hpp"

#include <gtest/gtest.h>

namespace fp8lab {
namespace {

using testing::copy_of;
using testing::finite_difference_check;
using testing::random_normal;
using testing::weighted_sum;

constexpr double kStep = 1e-2;
constexpr double kTolerance = 2e-3;  // relative Frobenius over sampled elements

class OpGradients : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> be = make_cpu_backend();
  std::uint64_t seed = testing::fresh_seed();
  HostTensor rand(Shape s, std::uint64_t stream, float std_dev = 1.f) {
    return random_normal(DType::f32, s, seed, stream, std_dev);
  }
  void expect_close(const char* what, float* input, std::int64_t n,
                    const std::vector<float>& analytic, const std::function<double()>& objective) {
    const auto r = finite_difference_check(input, n, analytic, objective, 48, kStep);
    EXPECT_LT(r.relative_error, kTolerance)
        << what << ": max abs error " << r.max_abs_error << " over " << r.checked << " elements";
  }
};

TEST_F(OpGradients, RmsNorm) {
  HostTensor x = rand({7, 20}, 1), w = rand({20}, 2), dy = rand({7, 20}, 3);
  HostTensor y = testing::poisoned(DType::f32, {7, 20}), rstd = testing::poisoned(DType::f32, {7});
  const std::vector<float> r = copy_of(dy);
  auto objective = [&] {
    be->rmsnorm_forward(x, w, 1e-5f, y, rstd);
    return weighted_sum(y, r);
  };
  objective();
  // dx and dw accumulate: start from random values and subtract them afterwards.
  HostTensor dx = rand({7, 20}, 4), dw = rand({20}, 5);
  const std::vector<float> dx0 = copy_of(dx), dw0 = copy_of(dw);
  be->rmsnorm_backward(x, w, rstd, dy, dx, dw);
  std::vector<float> gx = copy_of(dx), gw = copy_of(dw);
  for (std::size_t i = 0; i < gx.size(); ++i) gx[i] -= dx0[i];
  for (std::size_t i = 0; i < gw.size(); ++i) gw[i] -= dw0[i];
  expect_close("dx", x.as<float>(), x.numel(), gx, objective);
  expect_close("dw", w.as<float>(), w.numel(), gw, objective);
}

TEST_F(OpGradients, Embedding) {
  const std::int64_t vocab = 11, d = 8, seq = 5, batch = 3;
  HostTensor wte = rand({vocab, d}, 1), wpe = rand({seq, d}, 2), dout = rand({batch * seq, d}, 3);
  HostTensor tokens(DType::i32, {batch * seq});
  for (std::int64_t i = 0; i < tokens.numel(); ++i) {
    tokens.as<std::int32_t>()[i] = static_cast<std::int32_t>(random_u32(seed, 9, i) % vocab);
  }
  HostTensor out = testing::poisoned(DType::f32, {batch * seq, d});
  const std::vector<float> r = copy_of(dout);
  auto objective = [&] {
    be->embedding_forward(tokens, wte, wpe, out);
    return weighted_sum(out, r);
  };
  objective();
  HostTensor dwte(DType::f32, {vocab, d}), dwpe(DType::f32, {seq, d});
  be->fill_zero(dwte);
  be->fill_zero(dwpe);
  be->embedding_backward(tokens, dout, dwte, dwpe);
  expect_close("dwte", wte.as<float>(), wte.numel(), copy_of(dwte), objective);
  expect_close("dwpe", wpe.as<float>(), wpe.numel(), copy_of(dwpe), objective);
  // An out-of-range token is a clear error, not a read past the table.
  tokens.as<std::int32_t>()[4] = static_cast<std::int32_t>(vocab);
  EXPECT_THROW(be->embedding_forward(tokens, wte, wpe, out), Error);
}

TEST_F(OpGradients, CausalAttention) {
  const int batch = 2, seq = 7, heads = 3, hd = 4, d = heads * hd;
  HostTensor qkv = rand({batch * seq, 3 * d}, 1), dout = rand({batch * seq, d}, 2);
  HostTensor out = testing::poisoned(DType::f32, {batch * seq, d});
  HostTensor lse = testing::poisoned(DType::f32, {batch, heads, seq});
  const std::vector<float> r = copy_of(dout);
  auto objective = [&] {
    be->attention_forward(qkv, heads, seq, out, lse);
    return weighted_sum(out, r);
  };
  objective();
  HostTensor dqkv = testing::poisoned(DType::f32, {batch * seq, 3 * d});
  be->attention_backward(qkv, out, lse, dout, heads, seq, dqkv);
  expect_close("dqkv", qkv.as<float>(), qkv.numel(), copy_of(dqkv), objective);
  // Causality: the first position of each sequence sees only itself, so its output is its v.
  for (int c = 0; c < d; ++c) {
    EXPECT_FLOAT_EQ(out.as<float>()[c], qkv.as<float>()[2 * d + c]);
  }
}

TEST_F(OpGradients, Gelu) {
  HostTensor x = rand({5, 13}, 1, 2.f), dy = rand({5, 13}, 2);
  HostTensor y = testing::poisoned(DType::f32, {5, 13}),
             dx = testing::poisoned(DType::f32, {5, 13});
  const std::vector<float> r = copy_of(dy);
  auto objective = [&] {
    be->gelu_forward(x, y);
    return weighted_sum(y, r);
  };
  objective();
  be->gelu_backward(x, dy, dx);
  expect_close("dx", x.as<float>(), x.numel(), copy_of(dx), objective);
}

TEST_F(OpGradients, LinearF32) {
  HostTensor x = rand({9, 12}, 1), w = rand({7, 12}, 2), dy = rand({9, 7}, 3);
  HostTensor y = testing::poisoned(DType::f32, {9, 7});
  const std::vector<float> r = copy_of(dy);
  auto objective = [&] {
    be->linear_forward(LinearMode::f32, x, w, y, "test");
    return weighted_sum(y, r);
  };
  objective();
  auto ctx = be->linear_forward(LinearMode::f32, x, w, y, "test");
  HostTensor dx = testing::poisoned(DType::f32, {9, 12}), dw(DType::f32, {7, 12});
  be->fill_zero(dw);
  be->linear_backward(*ctx, dy, dx, dw);
  expect_close("dx", x.as<float>(), x.numel(), copy_of(dx), objective);
  expect_close("dw", w.as<float>(), w.numel(), copy_of(dw), objective);
}

TEST_F(OpGradients, CrossEntropyWithIgnoredTargets) {
  const std::int64_t rows = 9, d = 8, vocab = 13;
  const int ignore = -100;
  HostTensor x = rand({rows, d}, 1), w = rand({vocab, d}, 2);
  HostTensor targets(DType::i32, {rows});
  for (std::int64_t i = 0; i < rows; ++i) {
    targets.as<std::int32_t>()[i] = static_cast<std::int32_t>(random_u32(seed, 7, i) % vocab);
  }
  targets.as<std::int32_t>()[3] = ignore;
  const TensorView none;
  auto objective = [&] {
    return be->cross_entropy(x, w, targets, ignore, 4, 0.f, none, none).loss_sum;
  };
  HostTensor dx = testing::poisoned(DType::f32, {rows, d}), dw(DType::f32, {vocab, d});
  be->fill_zero(dw);
  const LossSums sums = be->cross_entropy(x, w, targets, ignore, 4, 1.f, dx, dw);
  EXPECT_EQ(sums.counted, rows - 1);
  EXPECT_DOUBLE_EQ(sums.loss_sum, objective());
  expect_close("dx", x.as<float>(), x.numel(), copy_of(dx), objective);
  expect_close("dw", w.as<float>(), w.numel(), copy_of(dw), objective);
  for (std::int64_t j = 0; j < d; ++j) EXPECT_EQ(dx.as<float>()[3 * d + j], 0.f);  // ignored row
}

}  // namespace
}  // namespace fp8lab
