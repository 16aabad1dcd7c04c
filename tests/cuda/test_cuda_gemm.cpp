// cuBLASLt GEMMs against the CPU reference GEMM (gemm_tn_cpu) with the same operands and scales.
//
// Bounds (relative Frobenius error against the CPU result, which accumulates in fp32): BF16 GEMMs
// differ only in summation order, so f32 outputs agree to ~1e-6 (bound 2e-5). Hopper's FP8 MMA
// adds products into partial sums with fewer than fp32's bits even with FAST_ACCUM off (measured
// on the H200: 1.0-1.2e-4 for f32 outputs at K = 400..4096, independent of K), bound 5e-4; fast
// accumulation, bound 5e-3. bf16 outputs add their own rounding (<= 2^-9 relative): 4e-3.
#if defined(FP8LAB_HAVE_CUDA)
#include <random>
#include <tuple>
#include <vector>

#include "cuda_test_util.hpp"
#include "fp8lab/fp8_cuda.hpp"
#include "fp8lab/fp8_grouped.hpp"  // scale_mode_name
#include "gemm/gemm.hpp"
#include "gemm/gemm_cuda.hpp"

namespace fp8lab {
namespace {

constexpr double kBoundF32 = 2e-5, kBoundFp8F32 = 5e-4, kBoundBf16 = 4e-3, kBoundFast = 5e-3;

struct Fp8Operand {
  HostTensor q;  // codes
  Fp8Scale scale;
};

Fp8Operand quantized(Shape shape, Fp8Format format, std::uint64_t seed, std::uint64_t stream) {
  const HostTensor x = testing::random_normal(DType::bf16, shape, seed, stream, 0.5f + stream);
  Fp8Operand op{HostTensor(fp8_dtype(format), shape), current_scale_cpu(x.view(), format, "x")};
  quantize_cpu(x.view(), op.scale.scale, format, op.q.view());
  return op;
}

// A device float holding a value (an inverse scale).
DeviceTensor device_scalar(float v) {
  HostTensor h(DType::f32, {1});
  h.as<float>()[0] = v;
  return to_device(h.view());
}

using Fp8GemmParam = std::tuple<std::int64_t, std::int64_t, std::int64_t, DType, DType, DType>;
class CudaFp8Gemm : public ::testing::TestWithParam<Fp8GemmParam> {};

TEST_P(CudaFp8Gemm, MatchesCpuReferenceWithinBounds) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const auto [m, n, k, a_type, b_type, out_type] = GetParam();
  const std::uint64_t seed = testing::fresh_seed();
  const auto fmt_of = [](DType t) { return t == DType::e4m3 ? Fp8Format::e4m3 : Fp8Format::e5m2; };
  const Fp8Operand a = quantized({m, k}, fmt_of(a_type), seed, 1);
  const Fp8Operand b = quantized({n, k}, fmt_of(b_type), seed, 2);
  HostTensor want = testing::poisoned(out_type, {m, n});
  gemm_tn_cpu(a.q.view(), b.q.view(), want.view(), {a.scale.inv_scale, b.scale.inv_scale, false});

  CublasLtGemm gemm;
  const DeviceTensor da = to_device(a.q.view()), db = to_device(b.q.view());
  const DeviceTensor sa = device_scalar(a.scale.inv_scale), sb = device_scalar(b.scale.inv_scale);
  for (bool fast : {false, true}) {
    DeviceTensor out = testing::poisoned_device(out_type, {m, n});
    gemm.matmul({da.view(), true, sa.view().as<const float>()},
                {db.view(), true, sb.view().as<const float>()}, out.view(), {fast, false}, nullptr);
    const HostTensor got = to_host(out.view());
    const double err = testing::relative_frobenius(got.view(), want.view());
    const double bound = out_type == DType::bf16 ? kBoundBf16 : (fast ? kBoundFast : kBoundFp8F32);
    EXPECT_LT(err, bound) << (fast ? "fast" : "precise") << " accumulation, " << m << "x" << n
                          << "x" << k;
  }
  EXPECT_EQ(gemm.cached_plans(), 2u);  // one per accumulation mode
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudaFp8Gemm,
    ::testing::Values(Fp8GemmParam{128, 256, 512, DType::e4m3, DType::e4m3, DType::bf16},
                      Fp8GemmParam{272, 144, 400, DType::e4m3, DType::e4m3, DType::f32},
                      Fp8GemmParam{16, 16, 16, DType::e4m3, DType::e4m3, DType::bf16},
                      Fp8GemmParam{512, 384, 1024, DType::e5m2, DType::e4m3, DType::bf16},
                      Fp8GemmParam{384, 512, 2048, DType::e5m2, DType::e4m3, DType::f32},
                      Fp8GemmParam{192, 96, 4096, DType::e4m3, DType::e5m2, DType::f32}));

TEST(CudaBf16Gemm, AllOperandLayoutsMatchCpuReference) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t m = 200, n = 136, k = 328;
  const HostTensor a = testing::random_normal(DType::bf16, {m, k}, seed, 1);
  const HostTensor b = testing::random_normal(DType::bf16, {n, k}, seed, 2);
  HostTensor a_t(DType::bf16, {k, m}), b_t(DType::bf16, {n, k});
  b_t = HostTensor(DType::bf16, {k, n});
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p < k; ++p)
      a_t.as<std::uint16_t>()[p * m + i] = a.as<std::uint16_t>()[i * k + p];
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t p = 0; p < k; ++p)
      b_t.as<std::uint16_t>()[p * n + j] = b.as<std::uint16_t>()[j * k + p];
  CublasLtGemm gemm;
  const DeviceTensor da = to_device(a.view()), db = to_device(b.view());
  const DeviceTensor dat = to_device(a_t.view()), dbt = to_device(b_t.view());
  for (DType out_type : {DType::bf16, DType::f32}) {
    HostTensor want = testing::poisoned(out_type, {m, n});
    gemm_tn_cpu(a.view(), b.view(), want.view());
    for (int layout = 0; layout < 4; ++layout) {
      const bool ak = layout & 1, bk = layout & 2;
      DeviceTensor out = testing::poisoned_device(out_type, {m, n});
      gemm.matmul({ak ? da.view() : dat.view(), ak}, {bk ? db.view() : dbt.view(), bk}, out.view(),
                  {}, nullptr);
      const double err = testing::relative_frobenius(to_host(out.view()).view(), want.view());
      EXPECT_LT(err, out_type == DType::bf16 ? kBoundBf16 : kBoundF32)
          << "layout a " << (ak ? "k-major" : "transposed") << ", b "
          << (bk ? "k-major" : "transposed");
    }
  }
}

TEST(CudaBf16Gemm, AccumulateAddsToF32Output) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t m = 64, n = 48, k = 96;
  const HostTensor a = testing::random_normal(DType::bf16, {m, k}, seed, 1);
  const HostTensor b = testing::random_normal(DType::bf16, {n, k}, seed, 2);
  const HostTensor c0 = testing::random_normal(DType::f32, {m, n}, seed, 3);
  HostTensor want(DType::f32, {m, n});
  std::memcpy(want.as<float>(), c0.as<float>(), c0.nbytes());
  gemm_tn_cpu(a.view(), b.view(), want.view(), {1.0f, 1.0f, true});
  CublasLtGemm gemm;
  const DeviceTensor da = to_device(a.view()), db = to_device(b.view());
  DeviceTensor out = to_device(c0.view());
  gemm.matmul({da.view(), true}, {db.view(), true}, out.view(), {.accumulate = true}, nullptr);
  EXPECT_LT(testing::relative_frobenius(to_host(out.view()).view(), want.view()), kBoundF32);
}

// ---- accumulating into a bf16 out (the bf16 parameter gradients, PrecisionConfig::grads) -----
// cuBLASLt's beta = 1 epilogue with C = D bf16 must give D = bf16(fp32 product + float(C)): one
// rounding to nearest even per call. The operands are small integers and the FP8 inverse scales
// powers of two, so every product and partial sum is exact in fp32 and in Hopper's FP8
// accumulator whatever the order or split (raw sums below 2^12, values multiples of 1/4 below
// 2^16): the expected bits are exactly bf16(C + P), P computed on the host. C holds quarter
// values the sum's rounding must round (ties among them), so a second rounding (of the product
// before the add, or of split-K parts in bf16) or a C left out changes bits.

// Uniform integers in [-r, r].
std::vector<double> small_integers(std::int64_t count, int r, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> pick(-r, r);
  std::vector<double> v(static_cast<std::size_t>(count));
  for (double& x : v) x = pick(rng);
  return v;
}

HostTensor bf16_of(const std::vector<double>& v, Shape shape) {
  HostTensor t(DType::bf16, shape);
  for (std::size_t i = 0; i < v.size(); ++i)
    t.as<std::uint16_t>()[i] = float_to_bf16(static_cast<float>(v[i]));  // exact: small integers
  return t;
}

// A bf16 C of quarter values j / 4 with |j| <= 255: exact in bf16's 8 significant bits.
HostTensor quarter_values(Shape shape, std::mt19937_64& rng) {
  const std::vector<double> j = small_integers(shape.numel(), 255, rng);
  HostTensor c(DType::bf16, shape);
  for (std::size_t i = 0; i < j.size(); ++i)
    c.as<std::uint16_t>()[i] = float_to_bf16(static_cast<float>(j[i] / 4));
  return c;
}

// bf16(float(c) + p), rounded once; p exact in fp32, and so is the sum.
HostTensor add_rounded_once(const HostTensor& c, const std::vector<double>& p) {
  HostTensor out(DType::bf16, c.shape());
  for (std::size_t i = 0; i < p.size(); ++i) {
    const float sum = bf16_to_float(c.as<std::uint16_t>()[i]) + static_cast<float>(p[i]);
    out.as<std::uint16_t>()[i] = float_to_bf16(sum);
  }
  return out;
}

// got (device, bf16) against bf16(float(c) + p), value for value. A miss names the first elements
// with C, P, bf16(C + bf16(P)) (what a rounding of the product before the add would give) and,
// when given, the product the same GEMM stores into an f32 out.
void expect_rounded_once(const TensorView& got_device, const HostTensor& c,
                         const std::vector<double>& p, const std::string& what,
                         const HostTensor* p_f32 = nullptr) {
  const HostTensor want = add_rounded_once(c, p), got = to_host(got_device);
  std::int64_t misses = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const std::uint16_t g = got.as<std::uint16_t>()[i], w = want.as<std::uint16_t>()[i];
    if (bf16_to_float(g) == bf16_to_float(w) || misses++ >= 8) continue;  // +0 == -0
    const float ci = bf16_to_float(c.as<std::uint16_t>()[i]);
    const auto pi = static_cast<float>(p[static_cast<std::size_t>(i)]);
    ADD_FAILURE() << what << ": element " << i << " got " << bf16_to_float(g) << ", want "
                  << bf16_to_float(w) << " (C " << ci << ", P " << pi << ", bf16(C + bf16(P)) "
                  << bf16_to_float(float_to_bf16(ci + round_to_bf16(pi)))
                  << (p_f32 ? ", P into f32 " + std::to_string(p_f32->as<float>()[i]) : "") << ")";
  }
  EXPECT_EQ(misses, 0) << what << ": elements not rounded once from C + P";
}

// The BF16 weight-gradient GEMM's layout (dW [N, K] += dYᵀ · x from dY [M, N] and x [M, K], both
// transposed operands), twice onto the same out: micro-batches accumulating into a bf16 dW. M
// 96, and M 8192 (a long contraction onto a small out, where cuBLASLt may split K).
TEST(CudaBf16Gemm, AccumulateIntoBf16OutputRoundsOnce) {
  FP8LAB_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::fresh_seed());
  const std::int64_t n = 48, k = 64;
  for (std::int64_t m : {std::int64_t{96}, std::int64_t{8192}}) {  // |P| <= 16 m < 2^18
    const std::vector<double> dy = small_integers(m * n, 4, rng), x = small_integers(m * k, 4, rng);
    std::vector<double> p(static_cast<std::size_t>(n * k), 0.0);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < k; ++j)
        for (std::int64_t r = 0; r < m; ++r)
          p[static_cast<std::size_t>(i * k + j)] +=
              dy[static_cast<std::size_t>(r * n + i)] * x[static_cast<std::size_t>(r * k + j)];
    const HostTensor c0 = quarter_values({n, k}, rng);
    const HostTensor c1 = add_rounded_once(c0, p);
    CublasLtGemm gemm;
    const DeviceTensor ddy = to_device(bf16_of(dy, {m, n}).view());
    const DeviceTensor dx = to_device(bf16_of(x, {m, k}).view());
    DeviceTensor dw = to_device(c0.view());
    const std::string what = "bf16 dW, M " + std::to_string(m);
    gemm.matmul({ddy.view(), false}, {dx.view(), false}, dw.view(),
                {.accumulate = true, .round_once = true}, nullptr);
    expect_rounded_once(dw.view(), c0, p, what + ", after one accumulate");
    gemm.matmul({ddy.view(), false}, {dx.view(), false}, dw.view(),
                {.accumulate = true, .round_once = true}, nullptr);
    expect_rounded_once(dw.view(), c1, p, what + ", after two accumulates");
  }
}

// The FP8 weight-gradient GEMM (dYqᵀ e5m2 [N, M] · Xqᵀ e4m3 [K, M], contracting the M tokens)
// under each recipe's wgrad scales (fp8lab/fp8_recipe.hpp: tensorwise SCALAR, rowwise OUTER_VEC,
// blockwise VEC128 on both operands), on exact operands: into an f32 out it is P exactly, and
// written over a bf16 out (a bf16 dW under GradWrite::overwrite) it is bf16(P), one rounding.
// Accumulating into a bf16 C is not among them: cuBLASLt's FP8 GEMMs round the product to bf16
// before they add C (measured on the H100, every scale mode: bf16(C + bf16(P))), so the CUDA
// linear writes an f32 dW and adds that (linear_wgrad_stages_f32).
class CudaFp8WgradGemm : public ::testing::TestWithParam<ScaleMode> {};

// Operand [rows, cols] of integers in [-3, 3] (exact in e4m3 and e5m2), its codes and its
// inverse scales (powers of two 1/2 .. 4, in the layout of `mode`).
struct ExactFp8Operand {
  std::vector<double> values;  // decoded values times their group's inverse scale
  HostTensor codes, inv_scales;
  ExactFp8Operand(std::int64_t rows, std::int64_t cols, Fp8Format format, ScaleMode mode,
                  std::mt19937_64& rng)
      : values(small_integers(rows * cols, 3, rng)),
        codes(fp8_dtype(format), {rows, cols}),
        inv_scales(DType::f32, {ScaleLayout{mode, rows, cols}.count()}) {
    const ScaleLayout layout{mode, rows, cols};
    for (std::int64_t i = 0; i < layout.count(); ++i)
      inv_scales.as<float>()[i] = std::ldexp(1.0f, static_cast<int>((i * 7 + 3) % 4) - 1);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        const auto at = static_cast<std::size_t>(r * cols + c);
        codes.as<std::uint8_t>()[at] = float_to_fp8(static_cast<float>(values[at]), format);
        values[at] *=
            inv_scales.as<float>()[layout.index(r / layout.group_rows(), c / layout.group_cols())];
      }
    }
  }
};

TEST_P(CudaFp8WgradGemm, ExactIntoF32AndRoundedOnceOverBf16) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const ScaleMode mode = GetParam();
  std::mt19937_64 rng(testing::fresh_seed());
  const std::int64_t n = 112, k = 208, m = 384;  // out [N, K]; M three 128-groups
  const ExactFp8Operand a(n, m, Fp8Format::e5m2, mode, rng), b(k, m, Fp8Format::e4m3, mode, rng);
  std::vector<double> p(static_cast<std::size_t>(n * k), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < k; ++j)
      for (std::int64_t r = 0; r < m; ++r)
        p[static_cast<std::size_t>(i * k + j)] += a.values[static_cast<std::size_t>(i * m + r)] *
                                                  b.values[static_cast<std::size_t>(j * m + r)];
  CublasLtGemm gemm;
  const DeviceTensor da = to_device(a.codes.view()), db = to_device(b.codes.view());
  const DeviceTensor sa = to_device(a.inv_scales.view()), sb = to_device(b.inv_scales.view());
  const GemmArg ga{da.view(), true, sa.view().as<const float>(), mode};
  const GemmArg gb{db.view(), true, sb.view().as<const float>(), mode};
  const std::string what = std::string("FP8 wgrad, scales ") + scale_mode_name(mode);
  DeviceTensor out_f32 = testing::poisoned_device(DType::f32, {n, k});
  gemm.matmul(ga, gb, out_f32.view(), {}, nullptr);
  const HostTensor got_f32 = to_host(out_f32.view());
  std::int64_t inexact = 0;
  for (std::int64_t i = 0; i < got_f32.numel(); ++i)
    inexact += got_f32.as<float>()[i] != static_cast<float>(p[static_cast<std::size_t>(i)]);
  EXPECT_EQ(inexact, 0) << what << ": f32 out differs from the exact product";
  DeviceTensor out_bf16 = testing::poisoned_device(DType::bf16, {n, k});
  gemm.matmul(ga, gb, out_bf16.view(), {.round_once = true}, nullptr);
  HostTensor zeros(DType::bf16, {n, k});
  std::memset(zeros.view().data, 0, zeros.nbytes());
  expect_rounded_once(out_bf16.view(), zeros, p, what + ", written over a bf16 out", &got_f32);
}

INSTANTIATE_TEST_SUITE_P(WgradScales, CudaFp8WgradGemm,
                         ::testing::Values(ScaleMode::tensor, ScaleMode::row, ScaleMode::vec128),
                         [](const auto& case_info) {
                           return std::string(scale_mode_name(case_info.param));
                         });

TEST(CudaGemmErrors, BadShapesDtypesLayoutsAndPointersAreNamed) {
  FP8LAB_SKIP_WITHOUT_GPU();
  DeviceArena arena(std::size_t{8} << 20);
  CublasLtGemm gemm;
  const float* s = static_cast<const float*>(arena.allocate(16, "scale"));
  const auto t = [&](DType d, std::int64_t r, std::int64_t c) {
    return arena.tensor(d, {r, c}, "t");
  };
  const auto expect_error = [](auto&& call, ErrorKind kind, const char* needle) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one mentioning " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(
      [&] {
        gemm.matmul({t(DType::e4m3, 64, 24), true, s}, {t(DType::e4m3, 32, 24), true, s},
                    t(DType::bf16, 64, 32), {}, nullptr);
      },
      ErrorKind::shape, "K=24");
  expect_error(
      [&] {
        gemm.matmul({t(DType::e5m2, 64, 32), true, s}, {t(DType::e5m2, 32, 32), true, s},
                    t(DType::bf16, 64, 32), {}, nullptr);
      },
      ErrorKind::dtype, "e5m2 x e5m2");
  expect_error(
      [&] {
        gemm.matmul({t(DType::e4m3, 32, 64), false, s}, {t(DType::e4m3, 32, 32), true, s},
                    t(DType::bf16, 64, 32), {}, nullptr);
      },
      ErrorKind::shape, "K-major");
  expect_error(
      [&] {
        gemm.matmul({t(DType::e4m3, 64, 32), true, nullptr}, {t(DType::e4m3, 32, 32), true, s},
                    t(DType::bf16, 64, 32), {}, nullptr);
      },
      ErrorKind::invalid_argument, "inverse-scale");
  expect_error(
      [&] {
        gemm.matmul({t(DType::bf16, 64, 32), true}, {t(DType::e4m3, 32, 32), true, s},
                    t(DType::bf16, 64, 32), {}, nullptr);
      },
      ErrorKind::dtype, "both be bf16");
  expect_error(
      [&] {
        gemm.matmul({t(DType::bf16, 64, 32), true}, {t(DType::bf16, 32, 48), true},
                    t(DType::bf16, 64, 32), {}, nullptr);
      },
      ErrorKind::shape, "inner dimensions");
  const TensorView a = t(DType::e4m3, 64, 32);
  const TensorView misaligned{a.as<std::uint8_t>() + 8, DType::e4m3, {48, 32}, Device::cuda};
  expect_error(
      [&] {
        gemm.matmul({misaligned, true, s}, {t(DType::e4m3, 32, 32), true, s},
                    t(DType::bf16, 48, 32), {}, nullptr);
      },
      ErrorKind::invalid_argument, "16-byte aligned");
  EXPECT_EQ(gemm.cached_plans(), 0u);
}

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
