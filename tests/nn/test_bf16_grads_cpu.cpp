// bf16 parameter gradients (PrecisionConfig::grads) on the CPU reference: every op that writes a
// gradient adds its whole contribution to the widened stored value in fp32 and rounds once. So
// from a bf16 gradient G, each op must store exactly float_to_bf16 of what the same op stores
// into an f32 gradient that starts from G's values, and the readers (AdamW, the gradient norm)
// must see exactly the widened values. The CUDA kernels are held to these bits in tests/cuda/.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/test_data.hpp"
#include "fp8lab/backend.hpp"
#include "fp8lab/distributed.hpp"
#include "model/model_fixtures.hpp"

namespace fp8lab {
namespace {

using testing::random_normal;

class Bf16Grads : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> be = make_cpu_backend();
  std::uint64_t seed = testing::fresh_seed();

  // A bf16 gradient of random values and its exact f32 copy: the two starting points.
  std::pair<HostTensor, HostTensor> start(Shape s, std::uint64_t stream) {
    HostTensor g16 = random_normal(DType::bf16, s, seed, stream, 0.5f);
    HostTensor g32(DType::f32, s);
    be->convert(g16, g32);
    return {std::move(g16), std::move(g32)};
  }

  // Every element of the bf16 result is the f32 result rounded once.
  static void expect_rounded_once(const HostTensor& g16, const HostTensor& g32, const char* what) {
    ASSERT_EQ(g16.numel(), g32.numel()) << what;
    for (std::int64_t i = 0; i < g16.numel(); ++i)
      ASSERT_EQ(g16.as<std::uint16_t>()[i], float_to_bf16(g32.as<float>()[i]))
          << what << " element " << i << ": " << bf16_to_float(g16.as<std::uint16_t>()[i]) << " vs "
          << g32.as<float>()[i];
  }
};

TEST_F(Bf16Grads, LinearDwRoundsTheFp32SumOnce) {
  const std::int64_t m = 32, k = 48, n = 16;
  const testing::LinearOperands op = testing::linear_operands(m, k, n, seed);
  for (LinearMode mode : {LinearMode::bf16, LinearMode::fp8}) {
    for (GradWrite write : {GradWrite::accumulate, GradWrite::overwrite}) {
      auto [dw16, dw32] = start({n, k}, 4);
      HostTensor y(DType::bf16, {m, n}), dx(DType::bf16, {m, k});
      auto ctx16 = be->linear_forward(mode, op.x, op.w, y, "bf16 dw");
      be->linear_backward(*ctx16, op.dy, dx, dw16, {}, write);
      auto ctx32 = be->linear_forward(mode, op.x, op.w, y, "f32 dw");
      be->linear_backward(*ctx32, op.dy, dx, dw32, {}, write);
      expect_rounded_once(dw16, dw32, linear_mode_name(mode));
    }
  }
}

TEST_F(Bf16Grads, RmsnormGainRoundsTheFp32SumOnce) {
  const std::int64_t rows = 70, d = 24;  // more rows than one 64-row partial block
  const HostTensor x = random_normal(DType::bf16, {rows, d}, seed, 1);
  const HostTensor dy = random_normal(DType::bf16, {rows, d}, seed, 2);
  const HostTensor w = random_normal(DType::f32, {d}, seed, 3);
  HostTensor y(DType::bf16, {rows, d}), rstd(DType::f32, {rows});
  be->rmsnorm_forward(x, w, 1e-5f, y, rstd);
  for (GradWrite write : {GradWrite::accumulate, GradWrite::overwrite}) {
    auto [dw16, dw32] = start({d}, 4);
    HostTensor dx(DType::f32, {rows, d});
    std::memset(dx.as<float>(), 0, dx.nbytes());
    be->rmsnorm_backward(x, w, rstd, dy, dx, dw16, write);
    std::memset(dx.as<float>(), 0, dx.nbytes());
    be->rmsnorm_backward(x, w, rstd, dy, dx, dw32, write);
    expect_rounded_once(dw16, dw32, "rmsnorm dw");
  }
}

// Tokens repeat (a vocabulary of 5 over 24 rows), so most dwte rows sum several rows of dout:
// in bf16 that is still one rounding per element, not one per row.
TEST_F(Bf16Grads, EmbeddingSumsEachElementInFp32AndRoundsOnce) {
  const std::int64_t vocab = 5, seq = 6, d = 20, rows = 4 * seq;
  const auto ids = testing::random_tokens(rows, vocab, seed, 1);
  HostTensor tokens(DType::i32, {rows});
  std::memcpy(tokens.as<std::int32_t>(), ids.data(), ids.size() * sizeof(std::int32_t));
  const HostTensor dout = random_normal(DType::bf16, {rows, d}, seed, 2);
  auto [dwte16, dwte32] = start({vocab, d}, 3);
  auto [dwpe16, dwpe32] = start({seq, d}, 4);
  be->embedding_backward(tokens, dout, dwte16, dwpe16);
  be->embedding_backward(tokens, dout, dwte32, dwpe32);
  expect_rounded_once(dwte16, dwte32, "dwte");
  expect_rounded_once(dwpe16, dwpe32, "dwpe");
  // Mixed gradient dtypes are refused, naming the tensor.
  EXPECT_THROW(be->embedding_backward(tokens, dout, dwte16, dwpe32), Error);
}

// The LM head's dW sums its loss chunks in fp32 and rounds once: into a bf16 dW exactly what
// the same chunks sum to in an f32 dW (written, then added to the widened stored value), so a
// rare token's small share of a chunk is not lost against a large running bf16 sum.
TEST_F(Bf16Grads, LmHeadSumsItsChunksInFp32AndRoundsOnce) {
  const std::int64_t rows = 18, d = 16, vocab = 40, chunk = 6;
  const HostTensor x = random_normal(DType::bf16, {rows, d}, seed, 1);
  const HostTensor w = random_normal(DType::f32, {vocab, d}, seed, 2, 0.3f);
  const auto t = testing::random_tokens(rows, vocab, seed, 3);
  HostTensor targets(DType::i32, {rows});
  std::memcpy(targets.as<std::int32_t>(), t.data(), t.size() * sizeof(std::int32_t));
  HostTensor dx(DType::bf16, {rows, d}), sum(DType::f32, {vocab, d});
  const float scale = 1.f / static_cast<float>(rows);
  be->cross_entropy(x, w, targets, -1, static_cast<int>(chunk), scale, dx, sum,
                    GradWrite::overwrite);
  for (GradWrite write : {GradWrite::overwrite, GradWrite::accumulate}) {
    auto [dw16, dw32] = start({vocab, d}, 4);
    if (write == GradWrite::overwrite) testing::poison(dw16.view());  // must not be read
    be->cross_entropy(x, w, targets, -1, static_cast<int>(chunk), scale, dx, dw16, write);
    for (std::int64_t i = 0; i < vocab * d; ++i) {
      const float before = write == GradWrite::overwrite ? 0.f : dw32.as<float>()[i];
      ASSERT_EQ(dw16.as<std::uint16_t>()[i], float_to_bf16(before + sum.as<float>()[i])) << i;
    }
  }
}

TEST_F(Bf16Grads, AdamWAndTheNormReadTheWidenedValues) {
  const std::int64_t n = 4099;  // past one 4096-element block of the norm's partial sums
  auto [g16, g32] = start({n}, 1);
  EXPECT_EQ(be->sum_of_squares(g16), be->sum_of_squares(g32));
  const HostTensor p0 = random_normal(DType::f32, {n}, seed, 2);
  const HostTensor m0 = random_normal(DType::f32, {n}, seed, 3, 0.1f);
  HostTensor v0 = random_normal(DType::f32, {n}, seed, 4, 0.1f);
  for (std::int64_t i = 0; i < n; ++i) v0.as<float>()[i] *= v0.as<float>()[i];
  AdamWStep step;
  step.lr = 1e-2f, step.weight_decay = 0.1f, step.grad_scale = 0.7f;
  step.bias_correction1 = 0.5f, step.bias_correction2 = 0.3f;
  HostTensor out[2][3];  // param, m, v after the update from g16, from g32
  const HostTensor* grads[2] = {&g16, &g32};
  for (int k = 0; k < 2; ++k) {
    for (int j = 0; j < 3; ++j) out[k][j] = HostTensor(DType::f32, {n});
    std::memcpy(out[k][0].as<float>(), p0.as<float>(), p0.nbytes());
    std::memcpy(out[k][1].as<float>(), m0.as<float>(), m0.nbytes());
    std::memcpy(out[k][2].as<float>(), v0.as<float>(), v0.nbytes());
    be->adamw_update(out[k][0], *grads[k], out[k][1], out[k][2], step);
  }
  for (int j = 0; j < 3; ++j)
    EXPECT_EQ(std::memcmp(out[0][j].as<float>(), out[1][j].as<float>(), out[0][j].nbytes()), 0)
        << "tensor " << j;
  // A gradient of another dtype is refused, naming it.
  HostTensor g64(DType::f64, {n});
  EXPECT_THROW(be->sum_of_squares(g64), Error);
}

// The local communicator (data parallelism on the CPU) sums bf16 gradients over the ranks in
// fp32, in rank order, and rounds once: the same bytes on every rank.
TEST_F(Bf16Grads, LocalAllReduceSumsInFp32AndRoundsOnce) {
  constexpr int kWorld = 3;
  const std::int64_t n = 257;
  std::vector<HostTensor> grads;
  for (int r = 0; r < kWorld; ++r)
    grads.push_back(random_normal(DType::bf16, {n}, seed, 10 + static_cast<std::uint64_t>(r)));
  std::vector<std::uint16_t> expect(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    float s = bf16_to_float(grads[0].as<std::uint16_t>()[i]);
    for (int r = 1; r < kWorld; ++r) s += bf16_to_float(grads[r].as<std::uint16_t>()[i]);
    expect[static_cast<std::size_t>(i)] = float_to_bf16(s);
  }
  run_local_ranks(kWorld, [&](int rank, Communicator& comm) { comm.all_reduce_sum(grads[rank]); });
  for (int r = 0; r < kWorld; ++r)
    EXPECT_EQ(std::memcmp(grads[r].as<std::uint16_t>(), expect.data(), expect.size() * 2), 0)
        << "rank " << r;
}

}  // namespace
}  // namespace fp8lab
