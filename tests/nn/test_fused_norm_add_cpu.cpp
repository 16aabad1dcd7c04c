// The fused RMSNorm ops on the CPU reference backend (fp8lab/backend.hpp): add_rmsnorm_forward
// against add then rmsnorm_forward, rmsnorm_backward_and_convert against rmsnorm_backward then
// convert, and both against the Backend's default bodies: the same bytes in every output,
// including the Fp8Meta the producer-fused amax leaves, on odd shapes, both dtypes, and with
// NaN and inf in the inputs. Arguments that break the ops' contract are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "common/test_data.hpp"
#include "fp8lab/backend.hpp"

namespace fp8lab {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

HostTensor copy_of(const HostTensor& h) {
  HostTensor c(h.dtype(), h.shape());
  std::memcpy(c.view().data, h.view().data, h.nbytes());
  return c;
}

void expect_same_bytes(const TensorView& a, const TensorView& b, const std::string& what) {
  ASSERT_EQ(a.nbytes(), b.nbytes()) << what;
  EXPECT_EQ(std::memcmp(a.data, b.data, a.nbytes()), 0) << what;
}

// Poisons two elements of an f32 or bf16 tensor with `v` (0: leaves it alone).
void poison_with(const HostTensor& t, float v) {
  if (v == 0.f || t.numel() == 0) return;
  for (std::int64_t i : {t.numel() / 2, t.numel() - 1}) {
    if (t.dtype() == DType::f32)
      t.as<float>()[i] = v;
    else
      t.as<std::uint16_t>()[i] = float_to_bf16(v);
  }
}

std::string tag(Shape s, DType a, DType b, float poison, bool slot) {
  std::string t = s.str() + " " + std::string(dtype_name(a)) + " " + std::string(dtype_name(b));
  if (poison != 0.f) t += std::isnan(poison) ? " NaN" : " inf";
  return t + (slot ? " with slot" : "");
}

// Unfused, fused and the Backend's default body; each writes its own outputs and amax slot.
enum class Path { unfused, fused, base_default };
constexpr Path kPaths[] = {Path::unfused, Path::fused, Path::base_default};

class FusedNormAddCpu : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> be = make_cpu_backend();
  std::uint64_t seed = testing::fresh_seed();
  Buffer slots = allocate_amax_slots(*be, 3, MemoryKind::workspace, "test slots");
  const Shape shapes[5] = {{37, 24}, {1, 1}, {5, 13}, {64, 100}, {0, 8}};

  const Fp8Meta& meta(int path) const {
    return static_cast<const Fp8Meta*>(slots.view().data)[path];
  }
};

TEST_F(FusedNormAddCpu, AddRmsnormForwardIsAddThenNorm) {
  for (const Shape& shape : shapes) {
    for (DType bt : {DType::bf16, DType::f32}) {
      for (DType yt : {DType::bf16, DType::f32}) {
        for (float poison : {0.f, kNaN, kInf}) {
          for (bool with_slot : {false, true}) {
            const std::string what = tag(shape, bt, yt, poison, with_slot);
            const HostTensor x = testing::random_normal(DType::f32, shape, seed, 1, 2.f);
            const HostTensor b = testing::random_normal(bt, shape, seed, 2);
            const HostTensor w = testing::random_normal(DType::f32, {shape[1]}, seed, 3);
            poison_with(b, poison);
            HostTensor sum[3], y[3], rstd[3];
            for (int p = 0; p < 3; ++p) {
              sum[p] = testing::poisoned(DType::f32, shape);
              y[p] = testing::poisoned(yt, shape);
              rstd[p] = testing::poisoned(DType::f32, {shape[0]});
              const AmaxSlot s = with_slot ? amax_slot(slots, p, Fp8Format::e4m3) : AmaxSlot{};
              switch (kPaths[p]) {
                case Path::unfused:
                  be->add(x, b, sum[p]);
                  be->rmsnorm_forward(sum[p], w, 1e-5f, y[p], rstd[p], s);
                  break;
                case Path::fused:
                  be->add_rmsnorm_forward(x, b, sum[p], w, 1e-5f, y[p], rstd[p], s);
                  break;
                case Path::base_default:
                  be->Backend::add_rmsnorm_forward(x, b, sum[p], w, 1e-5f, y[p], rstd[p], s);
                  break;
              }
            }
            for (int p = 1; p < 3; ++p) {
              const std::string where = what + (p == 1 ? " fused" : " default");
              expect_same_bytes(sum[0], sum[p], where + " sum");
              expect_same_bytes(y[0], y[p], where + " y");
              expect_same_bytes(rstd[0], rstd[p], where + " rstd");
              if (with_slot) {
                EXPECT_EQ(std::memcmp(&meta(0), &meta(p), sizeof(Fp8Meta)), 0) << where;
                EXPECT_EQ(meta(p).nonfinite, poison != 0.f && shape.numel() > 0 ? 1u : 0u) << where;
              }
            }
          }
        }
      }
    }
  }
}

TEST_F(FusedNormAddCpu, RmsnormBackwardAndConvertIsBackwardThenConvert) {
  for (const Shape& shape : shapes) {
    // The model's case (f32 residual gradient, bf16 dY copy) and fp32 compute's (f32 copy).
    for (DType ct : {DType::bf16, DType::f32}) {
      for (float poison : {0.f, kNaN, kInf}) {
        for (bool with_slot : {false, true}) {
          const std::string what = tag(shape, DType::f32, ct, poison, with_slot);
          const HostTensor x = testing::random_normal(DType::f32, shape, seed, 4, 2.f);
          const HostTensor w = testing::random_normal(DType::f32, {shape[1]}, seed, 5);
          const HostTensor dy = testing::random_normal(DType::bf16, shape, seed, 6);
          const HostTensor dx0 = testing::random_normal(DType::f32, shape, seed, 7, 0.5f);
          const HostTensor dw0 = testing::random_normal(DType::f32, {shape[1]}, seed, 8);
          HostTensor y(DType::f32, shape), rstd(DType::f32, {shape[0]});
          be->rmsnorm_forward(x, w, 1e-5f, y, rstd);
          poison_with(dy, poison);
          HostTensor dx[3], dw[3], copy[3];
          for (int p = 0; p < 3; ++p) {
            dx[p] = copy_of(dx0);
            dw[p] = copy_of(dw0);
            copy[p] = testing::poisoned(ct, shape);
            const AmaxSlot s = with_slot ? amax_slot(slots, p, Fp8Format::e5m2) : AmaxSlot{};
            switch (kPaths[p]) {
              case Path::unfused:
                be->rmsnorm_backward(x, w, rstd, dy, dx[p], dw[p]);
                be->convert(dx[p], copy[p], s);
                break;
              case Path::fused:
                be->rmsnorm_backward_and_convert(x, w, rstd, dy, dx[p], dw[p], copy[p], s);
                break;
              case Path::base_default:
                be->Backend::rmsnorm_backward_and_convert(x, w, rstd, dy, dx[p], dw[p], copy[p], s);
                break;
            }
          }
          for (int p = 1; p < 3; ++p) {
            const std::string where = what + (p == 1 ? " fused" : " default");
            expect_same_bytes(dx[0], dx[p], where + " dx");
            expect_same_bytes(dw[0], dw[p], where + " dw");
            expect_same_bytes(copy[0], copy[p], where + " copy");
            if (with_slot) {
              EXPECT_EQ(std::memcmp(&meta(0), &meta(p), sizeof(Fp8Meta)), 0) << where;
              EXPECT_EQ(meta(p).nonfinite, poison != 0.f && shape.numel() > 0 ? 1u : 0u) << where;
            }
          }
        }
      }
    }
  }
}

TEST_F(FusedNormAddCpu, ContractViolationsAreRefused) {
  const Shape shape{8, 16};
  const HostTensor x = testing::random_normal(DType::f32, shape, seed, 1);
  const HostTensor b = testing::random_normal(DType::bf16, shape, seed, 2);
  const HostTensor w = testing::random_normal(DType::f32, {16}, seed, 3);
  HostTensor sum(DType::f32, shape), y(DType::bf16, shape), rstd(DType::f32, {8});
  const HostTensor x_bf16 = testing::random_normal(DType::bf16, shape, seed, 4);
  HostTensor sum_bf16(DType::bf16, shape);
  // The fused op and the default body refuse the same arguments.
  for (bool base : {false, true}) {
    auto run = [&](const TensorView& xx, const TensorView& s, const TensorView& yy) {
      if (base)
        be->Backend::add_rmsnorm_forward(xx, b, s, w, 1e-5f, yy, rstd);
      else
        be->add_rmsnorm_forward(xx, b, s, w, 1e-5f, yy, rstd);
    };
    EXPECT_EQ(testing::error_of([&] { run(x_bf16, sum, y); }).kind(), ErrorKind::dtype) << base;
    EXPECT_EQ(testing::error_of([&] { run(x, sum_bf16, y); }).kind(), ErrorKind::dtype) << base;
    // In place (sum = x), and y over the branch.
    EXPECT_EQ(testing::error_of([&] { run(x, x, y); }).kind(), ErrorKind::invalid_argument) << base;
    EXPECT_EQ(testing::error_of([&] { run(x, sum, b); }).kind(), ErrorKind::invalid_argument)
        << base;
  }
  HostTensor dx(DType::f32, shape), dw(DType::f32, {16});
  be->fill_zero(dx);
  be->fill_zero(dw);
  for (const TensorView& bad_copy : {dx.view(), b.view()}) {  // over dx, over dy
    EXPECT_EQ(testing::error_of([&] {
                be->rmsnorm_backward_and_convert(x, w, rstd, b, dx, dw, bad_copy);
              }).kind(),
              ErrorKind::invalid_argument);
  }
  HostTensor short_copy(DType::bf16, {4, 16});
  EXPECT_EQ(testing::error_of([&] {
              be->rmsnorm_backward_and_convert(x, w, rstd, b, dx, dw, short_copy);
            }).kind(),
            ErrorKind::shape);
}

}  // namespace
}  // namespace fp8lab
