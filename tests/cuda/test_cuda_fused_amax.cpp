// The producer-fused amax on the CUDA backend (AmaxSlot in fp8lab/backend.hpp):
// - each producer op (RMSNorm, GELU forward and backward, convert) leaves in its slot the very
//   Fp8Meta bytes that amax_scale_cuda writes reading the op's stored output back: amax, scale,
//   inv_scale, the non-finite flag, zeroed counters and scratch words; with a NaN and with an
//   inf in the output too; on prime shapes, unaligned views (the scalar paths) and tensors large
//   enough that every thread loops; and the output bytes do not change;
// - an FP8 linear handed the slot reports a non-finite input with the same error, naming
//   "<name>.x" / "<name>.dy";
// - the whole model gives the same loss bits and gradient bytes with the fusion on and off.
#if defined(FP8LAB_HAVE_CUDA)
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cuda/cuda_test_util.hpp"
#include "cuda/model_ab.hpp"
#include "fp8lab/backend.hpp"
#include "fp8lab/fp8_cuda.hpp"
#include "fp8lab/model.hpp"

namespace fp8lab {
namespace {

using testing::describe;
using testing::DeviceView;
using testing::read_meta;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

struct Case {
  Shape shape;
  std::int64_t offset;  // elements: 1 makes every view unaligned (the scalar kernels)
  DType out;            // the producer's output dtype
};

std::string label(const Case& c, const char* op, float poison) {
  std::string s = std::string(op) + " " + c.shape.str() + " offset " + std::to_string(c.offset) +
                  " -> " + std::string(dtype_name(c.out));
  if (poison != 0.f) s += std::isnan(poison) ? " with NaN" : " with inf";
  return s;
}

class CudaFusedAmax : public ::testing::Test {
 protected:
  void SetUp() override {
    FP8LAB_SKIP_WITHOUT_GPU();
    gpu = make_cuda_backend();
    slots = allocate_amax_slots(*gpu, 1, MemoryKind::workspace, "test slot");
    reference = DeviceTensor(DType::u8, Shape{static_cast<std::int64_t>(sizeof(Fp8Meta))});
    fill_bytes_cuda(reference.view(), 0);
  }
  void TearDown() override { slots = Buffer(); }

  // produce(out, slot) with and without a slot: same output bytes, and the slot's bytes equal
  // what amax_scale_cuda writes for the output.
  void check(const std::string& what, const Case& c, Fp8Format format,
             const std::function<void(const TensorView&, AmaxSlot)>& produce) {
    DeviceView plain(c.out, c.shape, c.offset), fused(c.out, c.shape, c.offset);
    const AmaxSlot slot = amax_slot(slots, 0, format);
    produce(plain.view, {});
    produce(fused.view, slot);
    gpu->synchronize();
    const HostTensor a = to_host(plain.view), b = to_host(fused.view);
    EXPECT_EQ(std::memcmp(a.view().data, b.view().data, a.nbytes()), 0) << what << ": output";
    auto* ref = static_cast<Fp8Meta*>(reference.view().data);
    amax_scale_cuda(fused.view, format, ref, nullptr);
    const Fp8Meta want = read_meta(ref), got = read_meta(slot.meta);
    EXPECT_EQ(std::memcmp(&want, &got, sizeof(Fp8Meta)), 0)
        << what << "\n  fused     " << describe(got) << "\n  reference " << describe(want);
    checked_nonfinite += want.nonfinite;
  }

  std::unique_ptr<Backend> gpu;
  Buffer slots;
  DeviceTensor reference;
  int checked_nonfinite = 0;
};

// Poisons element i (and a later one) of a host tensor with `v`.
void poison_at(const HostTensor& t, float v) {
  for (std::int64_t i : {t.numel() / 3, t.numel() - 1}) {
    if (t.dtype() == DType::f32)
      t.as<float>()[i] = v;
    else
      t.as<std::uint16_t>()[i] = float_to_bf16(v);
  }
}

TEST_F(CudaFusedAmax, ProducersWriteTheMetaAmaxScaleWouldWrite) {
  const std::uint64_t seed = testing::fresh_seed();
  const std::vector<Case> cases = {
      {{1481, 677}, 0, DType::bf16},  {{1481, 677}, 1, DType::bf16}, {{1, 3221}, 0, DType::bf16},
      {{256, 512}, 0, DType::bf16},   {{256, 512}, 0, DType::f32},   {{1481, 677}, 1, DType::f32},
      {{40007, 64}, 0, DType::bf16},   // more rows than the RMSNorm grid: warps loop
      {{2053, 4099}, 0, DType::bf16},  // more elements than the elementwise grid covers at once
  };
  for (const Case& c : cases) {
    for (float poison : {0.f, kNaN, kInf}) {
      const std::int64_t rows = c.shape[0], d = c.shape[1];
      HostTensor x = testing::random_normal(DType::bf16, c.shape, seed, 1, 3.f);
      HostTensor g = testing::random_normal(DType::bf16, c.shape, seed, 2);
      HostTensor resid = testing::random_normal(DType::f32, c.shape, seed, 3, 1e-3f);
      HostTensor w = testing::random_normal(DType::f32, {d}, seed, 4);
      if (poison != 0.f) {
        poison_at(x, poison);
        poison_at(g, poison);
        poison_at(resid, poison);
      }
      const DeviceView dx(x, c.offset), dg(g, c.offset), dresid(resid, c.offset), dw(w, c.offset);
      DeviceView rstd(DType::f32, {rows}, 0);
      check(label(c, "rmsnorm", poison), c, Fp8Format::e4m3, [&](const TensorView& y, AmaxSlot s) {
        gpu->rmsnorm_forward(dx.view, dw.view, 1e-5f, y, rstd.view, s);
      });
      check(label(c, "gelu", poison), c, Fp8Format::e4m3,
            [&](const TensorView& y, AmaxSlot s) { gpu->gelu_forward(dx.view, y, s); });
      check(label(c, "gelu backward", poison), c, Fp8Format::e5m2,
            [&](const TensorView& y, AmaxSlot s) { gpu->gelu_backward(dx.view, dg.view, y, s); });
      check(label(c, "convert", poison), c, Fp8Format::e5m2,
            [&](const TensorView& y, AmaxSlot s) { gpu->convert(dresid.view, y, s); });
    }
  }
  EXPECT_GT(checked_nonfinite, 0) << "the NaN/inf cases must reach the outputs";
}

TEST_F(CudaFusedAmax, AnEmptyOutputStillGetsItsScale) {
  const Case c{{0, 64}, 0, DType::bf16};
  const DeviceView x(DType::bf16, c.shape, 0), w(DType::f32, {64}, 0), rstd(DType::f32, {0}, 0);
  check("rmsnorm of no rows", c, Fp8Format::e4m3, [&](const TensorView& y, AmaxSlot s) {
    gpu->rmsnorm_forward(x.view, w.view, 1e-5f, y, rstd.view, s);
  });
  check("gelu of nothing", c, Fp8Format::e4m3,
        [&](const TensorView& y, AmaxSlot s) { gpu->gelu_forward(x.view, y, s); });
}

// A non-finite input that reached the producer is reported by the linear as before.
TEST_F(CudaFusedAmax, NonFiniteInputsAreReportedAsWithoutTheSlot) {
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t m = 64, k = 128, n = 64;
  HostTensor x = testing::random_normal(DType::f32, {m, k}, seed, 1);
  x.as<float>()[7 * k + 3] = kNaN;
  HostTensor dresid = testing::random_normal(DType::f32, {m, n}, seed, 2);
  dresid.as<float>()[5] = kInf;
  const DeviceTensor dx_in = to_device(x), ddresid = to_device(dresid);
  const DeviceTensor w = to_device(testing::random_normal(DType::bf16, {n, k}, seed, 3));
  const DeviceTensor norm_w = to_device(testing::random_normal(DType::f32, {k}, seed, 4));
  const DeviceTensor good_x = to_device(testing::random_normal(DType::bf16, {m, k}, seed, 5));
  const DeviceTensor ln(DType::bf16, {m, k}), rstd(DType::f32, {m}), y(DType::bf16, {m, n});
  const DeviceTensor dy(DType::bf16, {m, n}), dxo(DType::bf16, {m, k}), dw(DType::f32, {n, k});
  std::string messages[2][2];
  for (int fused = 0; fused < 2; ++fused) {
    auto be = make_cuda_backend();  // a reported error ends a backend's step: a fresh one each
    Buffer s = allocate_amax_slots(*be, 1, MemoryKind::workspace, "slot");
    const AmaxSlot xs = fused ? amax_slot(s, 0, Fp8Format::e4m3) : AmaxSlot{};
    be->rmsnorm_forward(dx_in, norm_w, 1e-5f, ln, rstd, xs);
    auto ctx = be->linear_forward(LinearMode::fp8, ln, w, y, "blocks.0.mlp.fc", xs);
    messages[fused][0] = testing::error_of([&] { be->synchronize(); }).message();
    auto be2 = make_cuda_backend();
    Buffer s2 = allocate_amax_slots(*be2, 1, MemoryKind::workspace, "slot");
    const AmaxSlot dys = fused ? amax_slot(s2, 0, Fp8Format::e5m2) : AmaxSlot{};
    auto ctx2 = be2->linear_forward(LinearMode::fp8, good_x, w, y, "blocks.0.mlp.proj");
    be2->convert(ddresid, dy, dys);
    be2->linear_backward(*ctx2, dy, dxo, dw, dys);
    messages[fused][1] = testing::error_of([&] { be2->synchronize(); }).message();
  }
  EXPECT_NE(messages[1][0].find("'blocks.0.mlp.fc.x'"), std::string::npos) << messages[1][0];
  EXPECT_NE(messages[1][1].find("'blocks.0.mlp.proj.dy'"), std::string::npos) << messages[1][1];
  EXPECT_EQ(messages[0][0], messages[1][0]);
  EXPECT_EQ(messages[0][1], messages[1][1]);
}

// The whole model: fused and unfused give the same loss bits and gradient bytes.
struct ModelCase {
  PrecisionPolicy policy;
  bool recompute;
};

class CudaFusedAmaxModel : public ::testing::TestWithParam<ModelCase> {};

TEST_P(CudaFusedAmaxModel, LossAndGradientsAreBitIdentical) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const ModelCase mc = GetParam();
  PrecisionConfig p;
  p.policy = mc.policy;
  p.mlp_recompute = mc.recompute;
  const std::uint64_t seed = testing::fresh_seed();
  testing::ModelRun runs[2];
  for (int fuse = 0; fuse < 2; ++fuse) {
    runs[fuse] = testing::run_gpu_model(p, 2, seed,
                                        [&](GptModel& model) { model.set_fuse_amax(fuse == 1); });
  }
  testing::expect_bit_identical(runs[0], runs[1]);
}

INSTANTIATE_TEST_SUITE_P(Policies, CudaFusedAmaxModel,
                         ::testing::Values(ModelCase{PrecisionPolicy::fp8_mlp, false},
                                           ModelCase{PrecisionPolicy::fp8_mlp, true},
                                           ModelCase{PrecisionPolicy::fp8_linears, false},
                                           ModelCase{PrecisionPolicy::fp8_linears, true}),
                         [](const auto& param_info) {
                           return testing::policy_case_name(param_info.param.policy,
                                                            param_info.param.recompute);
                         });

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
