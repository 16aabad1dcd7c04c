// CPU ops beyond fp32 gradients: bf16 activations match the fp32 op on the same (bf16-rounded)
// inputs within one bf16 rounding; results do not depend on the OpenMP thread count; chunking
// the loss does not change it; bad arguments are errors naming the shapes.
#include "common/test_data.hpp"
#include "fp8lab/backend.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>

namespace fp8lab {
namespace {

using testing::random_normal;
using testing::relative_frobenius;
using testing::to_f64;

// bf16 output vs fp32 output: one rounding to bf16 is at most 2^-9 relative per element.
constexpr double kBf16Bound = 4e-3;

class OpDtypes : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> be = make_cpu_backend();
  std::uint64_t seed = testing::fresh_seed();
  // A bf16 tensor and its exact fp32 copy.
  std::pair<HostTensor, HostTensor> pair(Shape s, std::uint64_t stream) {
    HostTensor b = random_normal(DType::bf16, s, seed, stream);
    HostTensor f(DType::f32, s);
    be->convert(b, f);
    return {std::move(b), std::move(f)};
  }
};

TEST_F(OpDtypes, Bf16ActivationsMatchFp32WithinOneRounding) {
  const int batch = 2, seq = 9, heads = 2, d = 16;
  auto [qkv16, qkv32] = pair({batch * seq, 3 * d}, 1);
  auto [x16, x32] = pair({batch * seq, d}, 2);
  HostTensor w = random_normal(DType::f32, {d}, seed, 3);
  HostTensor lse(DType::f32, {batch, heads, seq}), rstd(DType::f32, {batch * seq});
  auto out16 = testing::poisoned(DType::bf16, {batch * seq, d});
  auto out32 = testing::poisoned(DType::f32, {batch * seq, d});
  be->attention_forward(qkv16, heads, seq, out16, lse);
  be->attention_forward(qkv32, heads, seq, out32, lse);
  EXPECT_LT(relative_frobenius(to_f64(out16), to_f64(out32)), kBf16Bound) << "attention";
  be->rmsnorm_forward(x16, w, 1e-5f, out16, rstd);
  be->rmsnorm_forward(x32, w, 1e-5f, out32, rstd);
  EXPECT_LT(relative_frobenius(to_f64(out16), to_f64(out32)), kBf16Bound) << "rmsnorm";
  be->gelu_forward(x16, out16);
  be->gelu_forward(x32, out32);
  EXPECT_LT(relative_frobenius(to_f64(out16), to_f64(out32)), kBf16Bound) << "gelu";
  auto dqkv16 = testing::poisoned(DType::bf16, {batch * seq, 3 * d});
  auto dqkv32 = testing::poisoned(DType::f32, {batch * seq, 3 * d});
  be->attention_forward(qkv32, heads, seq, out32, lse);
  be->attention_backward(qkv16, out16, lse, x16, heads, seq, dqkv16);
  be->attention_backward(qkv32, out32, lse, x32, heads, seq, dqkv32);
  EXPECT_LT(relative_frobenius(to_f64(dqkv16), to_f64(dqkv32)), kBf16Bound) << "attention bwd";
}

TEST_F(OpDtypes, ResultsDoNotDependOnTheThreadCount) {
  const int batch = 3, seq = 11, heads = 2, d = 24, vocab = 37;
  HostTensor qkv = random_normal(DType::f32, {batch * seq, 3 * d}, seed, 1);
  HostTensor x = random_normal(DType::f32, {batch * seq, d}, seed, 2);
  HostTensor w = random_normal(DType::f32, {d}, seed, 3);
  HostTensor wte = random_normal(DType::f32, {vocab, d}, seed, 4);
  HostTensor tokens(DType::i32, {batch * seq});
  for (int i = 0; i < batch * seq; ++i)
    tokens.as<std::int32_t>()[i] = static_cast<int>(random_u32(seed, 5, i) % vocab);
  auto run = [&](int threads) {
    omp_set_num_threads(threads);
    HostTensor out(DType::f32, {batch * seq, d}), lse(DType::f32, {batch, heads, seq});
    HostTensor dqkv(DType::f32, {batch * seq, 3 * d}), rstd(DType::f32, {batch * seq});
    HostTensor dx(DType::f32, {batch * seq, d}), dw(DType::f32, {d}), dwte(DType::f32, {vocab, d});
    HostTensor dwpe(DType::f32, {seq, d});
    be->attention_forward(qkv, heads, seq, out, lse);
    be->attention_backward(qkv, out, lse, x, heads, seq, dqkv);
    be->rmsnorm_forward(x, w, 1e-5f, out, rstd);
    be->rmsnorm_backward(x, w, rstd, out, dx, dw);
    be->embedding_backward(tokens, x, dwte, dwpe);
    std::vector<float> all;
    for (const HostTensor* t : {&out, &lse, &dqkv, &dx, &dw, &dwte, &dwpe}) {
      all.insert(all.end(), t->as<float>(), t->as<float>() + t->numel());
    }
    all.push_back(static_cast<float>(be->sum_of_squares(dqkv)));
    return all;
  };
  const int max_threads = omp_get_max_threads();
  const auto one = run(1), three = run(3);
  omp_set_num_threads(max_threads);
  ASSERT_EQ(one.size(), three.size());
  EXPECT_EQ(std::memcmp(one.data(), three.data(), one.size() * 4), 0);
}

TEST_F(OpDtypes, LossChunkingDoesNotChangeTheResult) {
  const std::int64_t rows = 23, d = 16, vocab = 41;
  HostTensor x = random_normal(DType::bf16, {rows, d}, seed, 1);
  HostTensor w = random_normal(DType::bf16, {vocab, d}, seed, 2);
  HostTensor targets(DType::i32, {rows});
  for (int i = 0; i < rows; ++i)
    targets.as<std::int32_t>()[i] = static_cast<int>(random_u32(seed, 3, i) % vocab);
  auto run = [&](int chunk, HostTensor& dx, HostTensor& dw) {
    be->fill_zero(dw);
    return be->cross_entropy(x, w, targets, -1, chunk, 1.f / rows, dx, dw);
  };
  HostTensor dx1(DType::bf16, {rows, d}), dw1(DType::f32, {vocab, d});
  HostTensor dx2(DType::bf16, {rows, d}), dw2(DType::f32, {vocab, d});
  const LossSums a = run(0, dx1, dw1), b = run(5, dx2, dw2);
  EXPECT_EQ(a.counted, rows);
  EXPECT_NEAR(a.loss_sum, b.loss_sum, 1e-6 * a.loss_sum);
  EXPECT_LT(relative_frobenius(to_f64(dx1), to_f64(dx2)),
            1e-2);  // bf16 dx: a rounding apart at most
  EXPECT_LT(relative_frobenius(to_f64(dw1), to_f64(dw2)), 1e-6);
}

TEST_F(OpDtypes, BadArgumentsAreErrorsNamingTheShapes) {
  HostTensor qkv(DType::f32, {14, 35}), out(DType::f32, {14, 12}), lse(DType::f32, {2, 3, 7});
  try {
    be->attention_forward(qkv, 3, 7, out, lse);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::shape);
    EXPECT_NE(e.message().find("[14, 35]"), std::string::npos) << e.message();
  }
  HostTensor x(DType::f32, {4, 8}), w(DType::f32, {9}), y(DType::f32, {4, 8}), r(DType::f32, {4});
  EXPECT_THROW(be->rmsnorm_forward(x, w, 1e-5f, y, r), Error);
  HostTensor xi(DType::i32, {4, 8});
  EXPECT_THROW(be->gelu_forward(xi, y), Error);
  HostTensor wl(DType::f32, {5, 8}), t(DType::i32, {4});
  t.as<std::int32_t>()[2] = 5;  // == vocab: out of range and not ignore_index
  EXPECT_THROW(be->cross_entropy(x, wl, t, -1, 0, 0.f, TensorView{}, TensorView{}), Error);
  EXPECT_THROW(make_backend("tpu"), Error);
}

}  // namespace
}  // namespace fp8lab
