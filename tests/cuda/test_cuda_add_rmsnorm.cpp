// The fused RMSNorm ops on the CUDA backend (fp8lab/backend.hpp) against the unfused sequence
// they replace, on the GPU:
// - add_rmsnorm_forward == add, then rmsnorm_forward: the sum, y and rstd bytes and the Fp8Meta
//   the producer-fused amax leaves;
// - rmsnorm_backward_and_convert == rmsnorm_backward, then convert: dx, dw, the bf16 copy and its
//   Fp8Meta;
// on the vector kernels, the scalar ones (prime D, unaligned outputs), the unfused fallbacks
// (unaligned inputs or copy beside aligned rest), more rows than the grids cover, empty tensors,
// and NaN / inf inputs, which an FP8 linear handed the slot then reports with the same error.
// The fused ops against the CPU: tests/cuda/test_cuda_ops.cpp.
#if defined(FP8LAB_HAVE_CUDA)
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cuda/cuda_test_util.hpp"
#include "cuda/linear_nonfinite_report.hpp"
#include "fp8lab/backend.hpp"

namespace fp8lab {
namespace {

using testing::describe;
using testing::DeviceView;
using testing::read_meta;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Element offsets of the views (1: off their 16-byte alignment).
struct Case {
  Shape shape;
  std::int64_t in_offset;    // x and branch (forward), x and dy (backward)
  std::int64_t out_offset;   // sum and y (forward), dx (backward)
  std::int64_t copy_offset;  // the backward's copy
  const char* path;          // the kernel the case is meant to reach
};

std::string label(const Case& c, DType a, DType b, float poison) {
  std::string s = c.shape.str() + " offsets " + std::to_string(c.in_offset) + "/" +
                  std::to_string(c.out_offset) + "/" + std::to_string(c.copy_offset) + " " +
                  std::string(dtype_name(a)) + " -> " + std::string(dtype_name(b)) + " (" + c.path +
                  ")";
  if (poison != 0.f) s += std::isnan(poison) ? " with NaN" : " with inf";
  return s;
}

void poison_at(const HostTensor& t, float v) {
  if (v == 0.f || t.numel() == 0) return;
  for (std::int64_t i : {t.numel() / 3, t.numel() - 1}) {
    if (t.dtype() == DType::f32)
      t.as<float>()[i] = v;
    else
      t.as<std::uint16_t>()[i] = float_to_bf16(v);
  }
}

void expect_same(const TensorView& a, const TensorView& b, const std::string& what) {
  const HostTensor ha = to_host(a), hb = to_host(b);
  const testing::ByteDiff d = testing::byte_diff(ha, hb);
  EXPECT_EQ(d.count, 0) << what << ": " << d.count << " of " << ha.nbytes()
                        << " bytes differ, first at byte " << d.first;
}

class CudaFusedNorm : public ::testing::Test {
 protected:
  void SetUp() override {
    FP8LAB_SKIP_WITHOUT_GPU();
    gpu = make_cuda_backend();
    slots = allocate_amax_slots(*gpu, 2, MemoryKind::workspace, "test slots");
  }
  void TearDown() override { slots = Buffer(); }

  // Slot 0 for the unfused sequence, slot 1 for the fused op: the same bytes.
  void expect_same_meta(Fp8Format f, bool poisoned, const std::string& what) {
    const Fp8Meta unfused = read_meta(amax_slot(slots, 0, f).meta);
    const Fp8Meta fused = read_meta(amax_slot(slots, 1, f).meta);
    EXPECT_EQ(std::memcmp(&unfused, &fused, sizeof(Fp8Meta)), 0)
        << what << "\n  fused   " << describe(fused) << "\n  unfused " << describe(unfused);
    EXPECT_EQ(fused.nonfinite, poisoned ? 1u : 0u) << what;
  }

  std::unique_ptr<Backend> gpu;
  Buffer slots;
};

TEST_F(CudaFusedNorm, AddRmsnormForwardIsAddThenNorm) {
  const std::uint64_t seed = testing::fresh_seed();
  const std::vector<Case> cases = {
      {{4099, 512}, 0, 0, 0, "vector, row in registers (2 groups per lane)"},
      {{777, 1000}, 0, 0, 0, "vector, registers (4 groups, the last lanes' idle)"},
      {{130, 2048}, 0, 0, 0, "vector, registers (8 groups)"},
      {{61, 2056}, 0, 0, 0, "vector, two passes (D > 2048)"},
      {{40007, 64}, 0, 0, 0, "vector, registers (1 group), warps loop over the rows"},
      {{1, 8}, 0, 0, 0, "vector, registers (1 group)"},
      {{37, 677}, 0, 0, 0, "scalar: prime D"},
      {{1481, 768}, 0, 1, 0, "scalar: unaligned sum and y"},
      {{1481, 768}, 1, 1, 0, "scalar: everything unaligned"},
      {{1481, 768}, 1, 0, 0, "unfused: vector split, unaligned x and branch"},
      {{0, 64}, 0, 0, 0, "empty"},
  };
  const std::pair<DType, DType> dtypes[] = {
      {DType::bf16, DType::bf16}, {DType::f32, DType::f32}, {DType::bf16, DType::f32}};
  for (const Case& c : cases) {
    for (const auto& [bt, yt] : dtypes) {
      for (float poison : {0.f, kNaN, kInf}) {
        const std::string what = label(c, bt, yt, poison);
        const std::int64_t rows = c.shape[0], d = c.shape[1];
        HostTensor x = testing::random_normal(DType::f32, c.shape, seed, 1, 2.f);
        HostTensor b = testing::random_normal(bt, c.shape, seed, 2);
        poison_at(x, poison);
        poison_at(b, poison);
        const DeviceView dx(x, c.in_offset), db(b, c.in_offset);
        const DeviceView dw(testing::random_normal(DType::f32, {d}, seed, 3), 0);
        DeviceView sum[2] = {{DType::f32, c.shape, c.out_offset},
                             {DType::f32, c.shape, c.out_offset}};
        DeviceView y[2] = {{yt, c.shape, c.out_offset}, {yt, c.shape, c.out_offset}};
        DeviceView rstd[2] = {{DType::f32, {rows}, 0}, {DType::f32, {rows}, 0}};
        const AmaxSlot s0 = amax_slot(slots, 0, Fp8Format::e4m3);
        const AmaxSlot s1 = amax_slot(slots, 1, Fp8Format::e4m3);
        gpu->add(dx.view, db.view, sum[0].view);
        gpu->rmsnorm_forward(sum[0].view, dw.view, 1e-5f, y[0].view, rstd[0].view, s0);
        gpu->add_rmsnorm_forward(dx.view, db.view, sum[1].view, dw.view, 1e-5f, y[1].view,
                                 rstd[1].view, s1);
        gpu->synchronize();
        expect_same(sum[0].view, sum[1].view, what + ": sum");
        expect_same(y[0].view, y[1].view, what + ": y");
        expect_same(rstd[0].view, rstd[1].view, what + ": rstd");
        expect_same_meta(Fp8Format::e4m3, poison != 0.f && rows > 0, what);
        // Without a slot the outputs are the same too.
        DeviceView y_plain(yt, c.shape, c.out_offset);
        gpu->add_rmsnorm_forward(dx.view, db.view, sum[1].view, dw.view, 1e-5f, y_plain.view,
                                 rstd[1].view);
        gpu->synchronize();
        expect_same(y[0].view, y_plain.view, what + ": y without the slot");
      }
    }
  }
}

TEST_F(CudaFusedNorm, RmsnormBackwardAndConvertIsBackwardThenConvert) {
  const std::uint64_t seed = testing::fresh_seed();
  const std::vector<Case> cases = {
      {{4099, 512}, 0, 0, 0, "vector, one-warp teams"},
      {{12000, 512}, 0, 0, 0, "vector, more rows than chunks"},
      {{130, 2048}, 0, 0, 0, "vector, four-warp teams"},
      {{3, 4104}, 0, 0, 0, "vector, four groups per thread"},
      {{700, 13}, 0, 0, 0, "scalar: prime D"},
      {{9, 100}, 0, 0, 0, "scalar: D % 8 != 0"},
      {{1481, 768}, 1, 1, 1, "scalar: everything unaligned"},
      {{1481, 768}, 0, 0, 1, "unfused: vector kernel, unaligned copy"},
      {{0, 64}, 0, 0, 0, "empty"},
  };
  for (const Case& c : cases) {
    for (float poison : {0.f, kNaN, kInf}) {
      const std::string what = label(c, DType::f32, DType::bf16, poison);
      const std::int64_t rows = c.shape[0], d = c.shape[1];
      const HostTensor x = testing::random_normal(DType::f32, c.shape, seed, 4, 2.f);
      HostTensor dy = testing::random_normal(DType::bf16, c.shape, seed, 5);
      poison_at(dy, poison);
      const HostTensor dx0 = testing::random_normal(DType::f32, c.shape, seed, 6, 1e-3f);
      const HostTensor dw0 = testing::random_normal(DType::f32, {d}, seed, 7);
      const DeviceView dx_in(x, c.in_offset), ddy(dy, c.in_offset);
      const DeviceView dw(testing::random_normal(DType::f32, {d}, seed, 8), 0);
      const DeviceView rstd(DType::f32, {rows}, 0), y(DType::f32, c.shape, 0);
      gpu->rmsnorm_forward(dx_in.view, dw.view, 1e-5f, y.view, rstd.view);
      DeviceView dx[2] = {{dx0, c.out_offset}, {dx0, c.out_offset}};
      DeviceView dwa[2] = {{dw0, 0}, {dw0, 0}};
      DeviceView copy[2] = {{DType::bf16, c.shape, c.copy_offset},
                            {DType::bf16, c.shape, c.copy_offset}};
      const AmaxSlot s0 = amax_slot(slots, 0, Fp8Format::e5m2);
      const AmaxSlot s1 = amax_slot(slots, 1, Fp8Format::e5m2);
      gpu->rmsnorm_backward(dx_in.view, dw.view, rstd.view, ddy.view, dx[0].view, dwa[0].view);
      gpu->convert(dx[0].view, copy[0].view, s0);
      gpu->rmsnorm_backward_and_convert(dx_in.view, dw.view, rstd.view, ddy.view, dx[1].view,
                                        dwa[1].view, copy[1].view, s1);
      gpu->synchronize();
      expect_same(dx[0].view, dx[1].view, what + ": dx");
      expect_same(dwa[0].view, dwa[1].view, what + ": dw");
      expect_same(copy[0].view, copy[1].view, what + ": copy");
      expect_same_meta(Fp8Format::e5m2, poison != 0.f && rows > 0, what);
    }
  }
}

// A non-finite value that reaches the fused op is reported by the FP8 linear handed its slot
// with the same error as after the unfused ops.
TEST_F(CudaFusedNorm, NonFiniteInputsAreReportedAsUnfused) {
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t m = 64, k = 128, n = 64;
  HostTensor branch = testing::random_normal(DType::bf16, {m, k}, seed, 1);
  branch.as<std::uint16_t>()[7 * k + 3] = float_to_bf16(kNaN);
  HostTensor dy = testing::random_normal(DType::bf16, {m, n}, seed, 2);
  dy.as<std::uint16_t>()[5] = float_to_bf16(kInf);
  const DeviceTensor x = to_device(testing::random_normal(DType::f32, {m, k}, seed, 3));
  const DeviceTensor db = to_device(branch), ddy = to_device(dy);
  const DeviceTensor xn = to_device(testing::random_normal(DType::f32, {m, n}, seed, 4));
  const DeviceTensor norm_wk = to_device(testing::random_normal(DType::f32, {k}, seed, 6));
  const DeviceTensor norm_wn = to_device(testing::random_normal(DType::f32, {n}, seed, 7));
  const DeviceTensor sum(DType::f32, {m, k}), rstd_k(DType::f32, {m});
  const DeviceTensor rstd_n(DType::f32, {m}), yn(DType::f32, {m, n}), dresid(DType::f32, {m, n});
  const DeviceTensor dwn(DType::f32, {n});
  // Both arms fill the slot: the fusion under test is of add + RMSNorm (and of the backward +
  // convert), not of the amax.
  testing::expect_nonfinite_reported_alike(
      {m, k, n}, seed, testing::UnfusedArmSlot::handed,
      [&](Backend& be, bool fused, const AmaxSlot& xs, const TensorView& ln) {
        if (fused) {
          be.add_rmsnorm_forward(x, db, sum, norm_wk, 1e-5f, ln, rstd_k, xs);
        } else {
          be.add(x, db, sum);
          be.rmsnorm_forward(sum, norm_wk, 1e-5f, ln, rstd_k, xs);
        }
      },
      [&](Backend& be, bool fused, const AmaxSlot& dys, const TensorView& d_branch) {
        be.rmsnorm_forward(xn, norm_wn, 1e-5f, yn, rstd_n);
        be.fill_zero(dresid);
        be.fill_zero(dwn);
        if (fused) {
          be.rmsnorm_backward_and_convert(xn, norm_wn, rstd_n, ddy, dresid, dwn, d_branch, dys);
        } else {
          be.rmsnorm_backward(xn, norm_wn, rstd_n, ddy, dresid, dwn);
          be.convert(dresid, d_branch, dys);
        }
      });
}

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
