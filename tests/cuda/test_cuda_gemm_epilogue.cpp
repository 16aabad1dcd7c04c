// cuBLASLt's GELU epilogue (CublasLtGemm with GemmEpilogue::gelu_aux) against an fp64 reference
// built from the same bf16 operands.
//
// Bounds, element by element, with p the exact product, S = sum |a_ik b_jk| (the fp32
// accumulation error is a few 2^-24 S) and e_t = 1e-3 the tanh error allowed (cuBLASLt may
// evaluate tanh with the hardware's approximation, ~2^-11 relative):
// - aux (gelu_aux) = p rounded to bf16: 2^-8 |p| + 2^-20 S.
// - out (gelu_aux) = GELU(p) rounded once: 2^-8 |GELU(p)| + 0.5 |p| e_t + 2^-20 S |GELU'(p)|;
//   GELU of the rounded aux would sit up to |GELU'| 2^-9 |p| further away, which the bound
//   does not tell apart: the backend test (test_cuda_linear_gelu.cpp) checks that instead.
// bf16 cannot tell GELU's tanh form from its erf form (they differ by < 2e-4 |x|, under half a
// bf16 ulp), so these tests pin the epilogue's arithmetic, not which of the two it is.
#if defined(FP8LAB_HAVE_CUDA)
#include <cmath>
#include <string>
#include <vector>

#include "cuda_test_util.hpp"
#include "gemm/gemm_cuda.hpp"

namespace fp8lab {
namespace {

constexpr double kTanhError = 1e-3;
constexpr double kSqrt2OverPi = 0.7978845608028654;

double gelu(double v) {
  return 0.5 * v * (1.0 + std::tanh(kSqrt2OverPi * (v + 0.044715 * v * v * v)));
}

double gelu_grad(double v) {
  const double t = std::tanh(kSqrt2OverPi * (v + 0.044715 * v * v * v));
  const double du = kSqrt2OverPi * (1.0 + 3 * 0.044715 * v * v);
  return 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * du;
}

// The exact product p = a bᵀ of bf16 a [m, k], b [n, k], and S = |a| |b|ᵀ.
struct Product {
  std::vector<double> p, s;
};

Product product(const HostTensor& a, const HostTensor& b) {
  const std::int64_t m = a.shape()[0], n = b.shape()[0], k = a.shape()[1];
  std::vector<double> fa = testing::to_f64(a.view()), fb = testing::to_f64(b.view());
  Product r{testing::gemm_tn_f64(fa, fb, m, n, k), {}};
  for (double& v : fa) v = std::fabs(v);
  for (double& v : fb) v = std::fabs(v);
  r.s = testing::gemm_tn_f64(fa, fb, m, n, k);
  return r;
}

// Counts the elements outside their bound and reports the first few.
void expect_within(const HostTensor& got, const std::vector<double>& want,
                   const std::function<double(std::size_t)>& bound, const std::string& what) {
  const std::vector<double> g = testing::to_f64(got.view());
  int bad = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double err = std::fabs(g[i] - want[i]);
    if (!(err <= bound(i))) {
      if (++bad <= 5)
        ADD_FAILURE() << what << "[" << i << "]: " << g[i] << " vs " << want[i] << " (error " << err
                      << ", bound " << bound(i) << ")";
    }
  }
  EXPECT_EQ(bad, 0) << what << ": elements outside their bound, of " << g.size();
}

// The MLP's first linear: y = GELU(x Wᵀ) and pre = x Wᵀ, both operands K-major (as
// linear_gelu_forward_cuda calls it).
TEST(CudaGemmEpilogue, GeluAuxWritesGeluOfTheProductAndTheProduct) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t m = 192, n = 136, k = 264;
  // x ~ N(0, 1) and w ~ N(0, 0.12): products of spread ~2, where GELU bends.
  const HostTensor x = testing::random_normal(DType::bf16, {m, k}, seed, 1);
  const HostTensor w = testing::random_normal(DType::bf16, {n, k}, seed, 2, 0.12f);
  const Product r = product(x, w);
  CublasLtGemm gemm;
  const DeviceTensor dx = to_device(x.view()), dw = to_device(w.view());
  DeviceTensor y = testing::poisoned_device(DType::bf16, {m, n});
  DeviceTensor pre = testing::poisoned_device(DType::bf16, {m, n});
  gemm.matmul({dx.view(), true}, {dw.view(), true}, y.view(),
              {.epilogue = GemmEpilogue::gelu_aux, .aux = pre.view()}, nullptr);
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  const double acc = std::ldexp(1.0, -20), rounding = std::ldexp(1.0, -8);
  expect_within(
      to_host(pre.view()), r.p,
      [&](std::size_t i) { return rounding * std::fabs(r.p[i]) + acc * r.s[i]; }, "pre");
  std::vector<double> want(r.p.size());
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = gelu(r.p[i]);
  expect_within(
      to_host(y.view()), want,
      [&](std::size_t i) {
        return rounding * std::fabs(want[i]) + 0.5 * std::fabs(r.p[i]) * kTanhError +
               acc * r.s[i] * std::fabs(gelu_grad(r.p[i]));
      },
      "GELU(x Wᵀ)");
  // The epilogue is part of the plan's key: the plain product of the same shape is a new plan.
  DeviceTensor plain = testing::poisoned_device(DType::bf16, {m, n});
  gemm.matmul({dx.view(), true}, {dw.view(), true}, plain.view(), {}, nullptr);
  EXPECT_EQ(gemm.cached_plans(), 2u);
}

TEST(CudaGemmEpilogue, BadEpilogueArgumentsAreNamed) {
  FP8LAB_SKIP_WITHOUT_GPU();
  DeviceArena arena(std::size_t{8} << 20);
  CublasLtGemm gemm;
  const float* s = static_cast<const float*>(arena.allocate(16, "scale"));
  const auto t = [&](DType d, std::int64_t r, std::int64_t c) {
    return arena.tensor(d, {r, c}, "t");
  };
  const TensorView a = t(DType::bf16, 64, 32), b = t(DType::bf16, 48, 32);
  const TensorView out = t(DType::bf16, 64, 48), aux = t(DType::bf16, 64, 48);
  const auto expect_error = [](auto&& call, ErrorKind kind, const char* needle) {
    const Error e = testing::error_of(call);
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  };
  const GemmCudaOptions gelu{.epilogue = GemmEpilogue::gelu_aux, .aux = aux};
  expect_error(
      [&] {
        gemm.matmul({t(DType::e4m3, 64, 32), true, s}, {t(DType::e4m3, 48, 32), true, s}, out, gelu,
                    nullptr);
      },
      ErrorKind::dtype, "gelu-aux epilogue takes bf16");
  expect_error(
      [&] {
        gemm.matmul({a, true}, {b, true}, t(DType::f32, 64, 48), gelu, nullptr);
      },
      ErrorKind::dtype, "bf16 out");
  expect_error(
      [&] {
        gemm.matmul({a, true}, {b, true}, out,
                    {.accumulate = true, .epilogue = GemmEpilogue::gelu_aux, .aux = aux}, nullptr);
      },
      ErrorKind::invalid_argument, "gelu-aux epilogue cannot accumulate");
  expect_error(
      [&] {
        gemm.matmul({a, true}, {b, true}, out, {.epilogue = GemmEpilogue::gelu_aux}, nullptr);
      },
      ErrorKind::invalid_argument, "needs its aux");
  expect_error(
      [&] {
        gemm.matmul({a, true}, {b, true}, out,
                    {.epilogue = GemmEpilogue::gelu_aux, .aux = t(DType::bf16, 48, 64)}, nullptr);
      },
      ErrorKind::shape, "must be bf16 of out's shape");
  TensorView shifted = out;  // half of it over out's second half
  shifted.data = out.as<std::uint16_t>() + 32 * 48;
  expect_error(
      [&] {
        gemm.matmul({a, true}, {b, true}, out, {.epilogue = GemmEpilogue::gelu_aux, .aux = shifted},
                    nullptr);
      },
      ErrorKind::invalid_argument, "aux overlaps out");
  EXPECT_EQ(gemm.cached_plans(), 0u);
}

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
