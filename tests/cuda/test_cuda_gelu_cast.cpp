// GELU taken inside the FP8 casts (fp8_cuda.hpp's gelu_amax_scale_cuda and
// quantize_transpose_gelu_cuda, and the CUDA backend's gelu_linear_forward built on them): the
// FP8 MLP's proj casts GELU(fc) straight from fc, never storing GELU's output. Everything must be
// the bytes of the separate path (the backend's gelu_forward, then the plain cast or linear):
// - the kernels on the tiled path (dims multiples of 16, aligned), the generic path (prime dims,
//   an unaligned view) and with a NaN and an inf in the input;
// - the backend op: y, the backward's dX and dW from the saved state, and the op timing shows
//   that GELU's own kernel did not run and its buffer was not written.
#if defined(FP8LAB_HAVE_CUDA)
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cuda_test_util.hpp"
#include "fp8lab/backend.hpp"
#include "fp8lab/fp8_cuda.hpp"
#include "nn/cuda_backend.hpp"

namespace fp8lab {
namespace {

using testing::DeviceView;
using testing::read_meta;

bool same_bytes(const TensorView& a, const TensorView& b) {
  const HostTensor x = to_host(a), y = to_host(b);
  return x.nbytes() == y.nbytes() && std::memcmp(x.view().data, y.view().data, x.nbytes()) == 0;
}

struct Case {
  Shape shape;
  std::int64_t offset;  // elements; 1 makes the views unaligned (the generic kernels)
  float poison;         // 0: none
};

TEST(CudaGeluCast, AmaxAndCastOfGeluEqualTheSeparatePath) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto gpu = make_cuda_backend();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const Case& c : {Case{{256, 512}, 0, 0.f}, Case{{272, 144}, 0, 0.f},
                        Case{{1481, 677}, 0, 0.f}, Case{{1481, 677}, 1, 0.f},
                        Case{{256, 512}, 0, nan}, Case{{256, 512}, 0, inf}}) {
    const std::string label = c.shape.str() + " offset " + std::to_string(c.offset) +
                              (c.poison == 0.f ? "" : " poisoned " + std::to_string(c.poison));
    HostTensor pre_h = testing::random_normal(DType::bf16, c.shape, seed, 1, 3.f);
    if (c.poison != 0.f) pre_h.as<std::uint16_t>()[c.shape.numel() / 3] = float_to_bf16(c.poison);
    const DeviceView pre(pre_h, c.offset);
    const std::int64_t rows = c.shape[0], cols = c.shape[1];
    // The separate path: GELU stored, then the plain amax and cast-transpose.
    const DeviceView y(DType::bf16, c.shape, c.offset);
    gpu->gelu_forward(pre.view, y.view);
    gpu->synchronize();
    const DeviceView metas(DType::u8, {static_cast<std::int64_t>(2 * sizeof(Fp8Meta))}, 0);
    fill_bytes_cuda(metas.view, 0);
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    auto* want_meta = static_cast<Fp8Meta*>(metas.view.data);
    Fp8Meta* got_meta = want_meta + 1;
    const DeviceView want_q(DType::e4m3, c.shape, c.offset), got_q(DType::e4m3, c.shape, c.offset);
    const DeviceView want_qt(DType::e4m3, {cols, rows}, c.offset);
    const DeviceView got_qt(DType::e4m3, {cols, rows}, c.offset);
    amax_scale_cuda(y.view, Fp8Format::e4m3, want_meta, nullptr);
    quantize_transpose_cuda(y.view, Fp8Format::e4m3, want_meta, want_q.view, want_qt.view, nullptr);
    gelu_amax_scale_cuda(pre.view, Fp8Format::e4m3, got_meta, nullptr);
    quantize_transpose_gelu_cuda(pre.view, Fp8Format::e4m3, got_meta, got_q.view, got_qt.view,
                                 nullptr);
    const Fp8Meta want = read_meta(want_meta), got = read_meta(got_meta);
    EXPECT_EQ(std::memcmp(&want, &got, sizeof(Fp8Meta)), 0)
        << label << "\n  from pre " << testing::describe(got) << "\n  from y   "
        << testing::describe(want);
    EXPECT_EQ(want.nonfinite, c.poison != 0.f ? 1u : 0u) << label;
    if (c.poison != 0.f) continue;  // a non-finite amax leaves the casts' bytes unspecified
    EXPECT_TRUE(same_bytes(got_q.view, want_q.view)) << label << ": q";
    EXPECT_TRUE(same_bytes(got_qt.view, want_qt.view)) << label << ": qt";
  }
}

// proj of an FP8 MLP through gelu_linear_forward against gelu_forward + linear_forward.
TEST(CudaGeluCast, BackendOpGivesTheSeparateOpsBytesWithoutStoringGelu) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t m = 272, ff = 384, d = 144;
  auto gpu = make_cuda_backend();
  auto* cuda = dynamic_cast<cuda::CudaBackend*>(gpu.get());
  ASSERT_NE(cuda, nullptr);
  const DeviceTensor pre = to_device(testing::random_normal(DType::bf16, {m, ff}, seed, 1, 2.f));
  const DeviceTensor w = to_device(testing::random_normal(DType::bf16, {d, ff}, seed, 2, 0.1f));
  const DeviceTensor dy = to_device(testing::random_normal(DType::bf16, {m, d}, seed, 3));
  DeviceTensor gelu_f = testing::poisoned_device(DType::bf16, {m, ff});
  DeviceTensor gelu_s = testing::poisoned_device(DType::bf16, {m, ff});
  const HostTensor gelu_before = to_host(gelu_f.view());
  DeviceTensor y_f = testing::poisoned_device(DType::bf16, {m, d});
  DeviceTensor y_s = testing::poisoned_device(DType::bf16, {m, d});

  cuda->set_op_timing(true);
  auto ctx_f = gpu->gelu_linear_forward(LinearMode::fp8, pre.view(), gelu_f.view(), w.view(),
                                        y_f.view(), "proj");
  cuda->set_op_timing(false);
  std::vector<std::string> ops;
  for (const cuda::OpTime& t : cuda->take_op_times()) ops.push_back(t.name);
  EXPECT_EQ(ops, (std::vector<std::string>{"linear_forward fp8: x cast",
                                           "linear_forward fp8: W wait",
                                           "linear_forward fp8: GEMM",
                                           "linear_forward fp8 +gelu-in"}));
  gpu->gelu_forward(pre.view(), gelu_s.view());
  auto ctx_s = gpu->linear_forward(LinearMode::fp8, gelu_s.view(), w.view(), y_s.view(), "proj");
  gpu->synchronize();
  EXPECT_TRUE(same_bytes(y_f.view(), y_s.view())) << "y";
  const HostTensor gelu_after = to_host(gelu_f.view());
  EXPECT_EQ(std::memcmp(gelu_after.view().data, gelu_before.view().data, gelu_after.nbytes()), 0)
      << "the GELU buffer was written: GELU was stored after all";

  // The saved states, compared through what the backward computes from them.
  DeviceTensor dx_f = testing::poisoned_device(DType::bf16, {m, ff});
  DeviceTensor dx_s = testing::poisoned_device(DType::bf16, {m, ff});
  DeviceTensor dw_f(DType::f32, {d, ff}), dw_s(DType::f32, {d, ff});
  fill_bytes_cuda(dw_f.view(), 0);
  fill_bytes_cuda(dw_s.view(), 0);
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  gpu->linear_backward(*ctx_f, dy.view(), dx_f.view(), dw_f.view());
  gpu->linear_backward(*ctx_s, dy.view(), dx_s.view(), dw_s.view());
  gpu->synchronize();
  EXPECT_TRUE(same_bytes(dx_f.view(), dx_s.view())) << "dX";
  EXPECT_TRUE(same_bytes(dw_f.view(), dw_s.view())) << "dW";

  // bf16 keeps the stored GELU (its backward reads x): the Backend default, GELU written.
  DeviceTensor gelu_b = testing::poisoned_device(DType::bf16, {m, ff});
  DeviceTensor y_b = testing::poisoned_device(DType::bf16, {m, d});
  auto ctx_b = gpu->gelu_linear_forward(LinearMode::bf16, pre.view(), gelu_b.view(), w.view(),
                                        y_b.view(), "proj");
  gpu->synchronize();
  EXPECT_TRUE(same_bytes(gelu_b.view(), gelu_s.view())) << "bf16: GELU stored by gelu_forward";
}

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
