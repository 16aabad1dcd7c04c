// The FP8 scaling recipes on the GPU: the grouped casts byte for byte against the CPU reference
// (prime and odd shapes, partial 128-groups), cuBLASLt's grouped-scale GEMMs against the CPU
// GEMM, and the CUDA linear under every recipe against the CPU linear.
//
// Bounds (relative Frobenius): the casts are bit-identical (checked), so the GEMMs differ only in
// accumulation order and Hopper's FP8 MMA partial sums (~1e-4 measured for tensorwise, see
// test_cuda_gemm.cpp): 5e-4 for f32 outputs, 4e-3 where bf16 rounding can flip.
#if defined(FP8LAB_HAVE_CUDA)
#include <array>
#include <cmath>
#include <tuple>

#include "cuda_test_util.hpp"
#include "fp8lab/backend.hpp"
#include "fp8lab/fp8_grouped.hpp"
#include "fp8/fp8_grouped_cuda.hpp"
#include "gemm/gemm.hpp"
#include "gemm/gemm_cuda.hpp"
#include "fp8lab/linear_cuda.hpp"

namespace fp8lab {
namespace {

using testing::expect_same_bytes;

constexpr double kBoundBf16 = 4e-3, kBoundF32 = 5e-4;

// Rows of magnitudes 2^-6 .. 2^6, so that every grouping picks different scales.
HostTensor ragged(std::int64_t rows, std::int64_t cols, std::uint64_t seed, float scale = 1.0f) {
  HostTensor x = testing::random_normal(DType::bf16, {rows, cols}, seed, 1, scale);
  auto* p = x.as<std::uint16_t>();
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      p[r * cols + c] = float_to_bf16(bf16_to_float(p[r * cols + c]) *
                                      std::ldexp(1.0f, static_cast<int>((r * 5 + c / 97) % 13) - 6));
  return x;
}

// Sprinkles +0, -0 and the smallest bf16 subnormal over x: zeros must not count as underflow,
// the subnormals must (the kernel counts underflows from whole words, the CPU one by one).
void sprinkle_zeros_and_tiny(HostTensor& x) {
  auto* p = x.as<std::uint16_t>();
  const std::int64_t cols = x.shape()[1];
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const std::int64_t k = ((i / cols) * 31 + (i % cols) * 17) % 53;
    if (k < 3) p[i] = std::array<std::uint16_t, 3>{0x0000, 0x8000, 0x0001}[static_cast<std::size_t>(k)];
  }
}

// The device outputs of a grouped cast of a [rows, cols] tensor (poisoned before), and the
// GroupedCastCuda naming them (qt and its scales only `with_t`).
struct GroupedCastOutputs {
  DeviceTensor q, inv, qt, inv_t, meta;
  GroupedCastCuda out;
  GroupedCastOutputs(ScaleMode mode, Fp8Format format, std::int64_t rows, std::int64_t cols,
                     bool with_t)
      : q(testing::poisoned_device(fp8_dtype(format), {rows, cols})),
        inv(testing::poisoned_device(DType::f32, {ScaleLayout{mode, rows, cols}.count()})),
        qt(testing::poisoned_device(fp8_dtype(format), {cols, rows})),
        inv_t(testing::poisoned_device(DType::f32, {ScaleLayout{mode, cols, rows}.count()})),
        meta(DType::u8, {static_cast<std::int64_t>(sizeof(Fp8Meta))}),
        out{q.view(), inv.view(), with_t ? qt.view() : TensorView{},
            with_t ? inv_t.view() : TensorView{}} {}
  Fp8Meta* meta_ptr() const { return meta.view().as<Fp8Meta>(); }
};

// The grouped cast of a finite x on the GPU against the CPU reference: codes, inverse scales,
// amax, the non-finite flag and the saturation and underflow counts.
void expect_grouped_cast_matches_cpu(const HostTensor& x, ScaleMode mode, Fp8Format format,
                                     bool with_t) {
  const std::int64_t rows = x.shape()[0], cols = x.shape()[1];
  const OperandScaling sc{mode, mode, mode == ScaleMode::block128};
  const ScaleLayout l{mode, rows, cols}, lt{mode, cols, rows};
  HostTensor q(fp8_dtype(format), {rows, cols}), inv(DType::f32, {l.count()});
  HostTensor qt(fp8_dtype(format), {cols, rows}), inv_t(DType::f32, {lt.count()});
  const GroupedCastStats s = quantize_grouped_cpu(x, format, mode, q, inv, "x");
  const GroupedCastStats st = quantize_grouped_transposed_cpu(x, format, mode, qt, inv_t, "x");
  const DeviceTensor dx = to_device(x.view());
  const GroupedCastOutputs d(mode, format, rows, cols, with_t);
  quantize_grouped_cuda(dx.view(), format, sc, d.out, d.meta_ptr(), nullptr);
  expect_same_bytes(q.view(), d.q.view(), "q");
  expect_same_bytes(inv.view(), d.inv.view(), "q inverse scales");
  if (with_t) {
    expect_same_bytes(qt.view(), d.qt.view(), "qt");
    expect_same_bytes(inv_t.view(), d.inv_t.view(), "qt inverse scales");
  }
  const Fp8Meta m = testing::read_meta(d.meta_ptr());
  EXPECT_EQ(m.amax, s.amax);
  EXPECT_EQ(m.nonfinite, 0u);
  const bool both = with_t && !sc.qt_is_transpose_of_q;
  EXPECT_EQ(static_cast<std::int64_t>(m.saturated),
            s.counts.saturated + (both ? st.counts.saturated : 0));
  EXPECT_EQ(static_cast<std::int64_t>(m.underflow),
            s.counts.underflow + (both ? st.counts.underflow : 0));
}

using CastParam = std::tuple<ScaleMode, Fp8Format, std::int64_t, std::int64_t, bool>;
class CudaGroupedCast : public ::testing::TestWithParam<CastParam> {};

TEST_P(CudaGroupedCast, MatchesTheCpuCastByteForByte) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const auto [mode, format, rows, cols, with_t] = GetParam();
  HostTensor x = ragged(rows, cols, testing::fresh_seed());
  sprinkle_zeros_and_tiny(x);
  expect_grouped_cast_matches_cpu(x, mode, format, with_t);
}

INSTANTIATE_TEST_SUITE_P(
    PrimeAndOddShapes, CudaGroupedCast,
    ::testing::Combine(::testing::Values(ScaleMode::row, ScaleMode::vec128, ScaleMode::block128),
                       ::testing::Values(Fp8Format::e4m3, Fp8Format::e5m2),
                       ::testing::Values(1, 131, 1481, 512), ::testing::Values(3221, 677, 384),
                       ::testing::Bool()));

// A grid of many tiles (18 x 33 = 594, more CTAs than an H100 or H200 holds at once), whole and
// edge tiles mixed; rows and columns multiples of 4 (the whole tiles' fast path reads 4 columns a
// lane), neither a multiple of 128.
INSTANTIATE_TEST_SUITE_P(
    ManyTiles, CudaGroupedCast,
    ::testing::Combine(::testing::Values(ScaleMode::row, ScaleMode::vec128, ScaleMode::block128),
                       ::testing::Values(Fp8Format::e4m3, Fp8Format::e5m2), ::testing::Values(2180),
                       ::testing::Values(4100), ::testing::Bool()));

// A group holding inf, -inf or NaN (the CPU cast refuses such a tensor): the kernel raises the
// non-finite flag and records the first id, in every mode, with and without the transpose, and
// whichever of the three values it is; the finite groups around it still take the fast path.
using NonFiniteParam = std::tuple<ScaleMode, std::uint16_t, bool>;
class CudaGroupedCastNonFinite : public ::testing::TestWithParam<NonFiniteParam> {};

TEST_P(CudaGroupedCastNonFinite, SetsTheFlagAndTheFirstId) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const auto [mode, bits, with_t] = GetParam();
  const std::int64_t rows = 300, cols = 411;
  HostTensor x = ragged(rows, cols, testing::fresh_seed());
  x.as<std::uint16_t>()[200 * cols + 300] = bits;
  const DeviceTensor dx = to_device(x.view());
  const GroupedCastOutputs d(mode, Fp8Format::e4m3, rows, cols, with_t);
  DeviceTensor first(DType::i32, {1});
  const std::int32_t big = 1 << 30;
  FP8LAB_CUDA_CHECK(cudaMemcpy(first.view().data, &big, 4, cudaMemcpyHostToDevice));
  quantize_grouped_cuda(dx.view(), Fp8Format::e4m3, {mode, mode, mode == ScaleMode::block128},
                        d.out, d.meta_ptr(), nullptr, first.view().as<int>(), 7);
  const Fp8Meta m = testing::read_meta(d.meta_ptr());
  EXPECT_EQ(m.nonfinite, 1u);
  EXPECT_FALSE(std::isfinite(m.amax)) << m.amax;
  const HostTensor id = to_host(first.view());
  EXPECT_EQ(id.as<std::int32_t>()[0], 7);
}

INSTANTIATE_TEST_SUITE_P(
    AllModes, CudaGroupedCastNonFinite,
    ::testing::Combine(::testing::Values(ScaleMode::row, ScaleMode::vec128, ScaleMode::block128),
                       ::testing::Values(std::uint16_t{0x7F80}, std::uint16_t{0xFF80},
                                         std::uint16_t{0x7FC1}),
                       ::testing::Bool()));

// The cuBLASLt GEMM of each recipe's pairs against the CPU GEMM on the same casts.
using GemmParam = std::tuple<std::tuple<ScaleMode, ScaleMode>, Fp8Format, bool>;

std::string gemm_case_name(const GemmParam& p) {
  const auto& modes = std::get<0>(p);
  return std::string(scale_mode_name(std::get<0>(modes))) + "_" +
         scale_mode_name(std::get<1>(modes)) +
         (std::get<1>(p) == Fp8Format::e4m3 ? "_e4m3" : "_e5m2") +
         (std::get<2>(p) ? "_f32" : "_bf16");
}
class CudaGroupedGemm : public ::testing::TestWithParam<GemmParam> {};

TEST_P(CudaGroupedGemm, MatchesTheCpuGemm) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const auto [modes, fa, f32_out] = GetParam();
  const auto [ma, mb] = modes;
  const std::int64_t m = 384, n = 256, k = 640;
  const std::uint64_t seed = testing::fresh_seed();
  const HostTensor a = ragged(m, k, seed), b = ragged(n, k, seed + 1, 0.05f);
  const ScaleLayout la{ma, m, k}, lb{mb, n, k};
  HostTensor qa(fp8_dtype(fa), {m, k}), ia(DType::f32, {la.count()});
  HostTensor qb(DType::e4m3, {n, k}), ib(DType::f32, {lb.count()});
  quantize_grouped_cpu(a, fa, ma, qa, ia, "a");
  quantize_grouped_cpu(b, Fp8Format::e4m3, mb, qb, ib, "b");
  const DType out_type = f32_out ? DType::f32 : DType::bf16;
  HostTensor c(out_type, {m, n});
  GemmOptions o;
  o.scale_mode_a = ma;
  o.scale_mode_b = mb;
  o.inv_scales_a = ia.as<const float>();
  o.inv_scales_b = ib.as<const float>();
  gemm_tn_cpu(qa, qb, c, o);
  const DeviceTensor dqa = to_device(qa.view()), dqb = to_device(qb.view());
  const DeviceTensor dia = to_device(ia.view()), dib = to_device(ib.view());
  DeviceTensor dc = testing::poisoned_device(out_type, {m, n});
  CublasLtGemm gemm;
  gemm.matmul({dqa.view(), true, dia.view().as<const float>(), ma},
              {dqb.view(), true, dib.view().as<const float>(), mb}, dc.view(), {}, nullptr);
  const HostTensor got = to_host(dc.view());
  const double err = testing::relative_frobenius(got.view(), c.view());
  std::fprintf(stderr, "[measured] cuBLASLt %s x %s (%s, %s out) vs CPU: %.2e\n",
               scale_mode_name(ma), scale_mode_name(mb), fa == Fp8Format::e4m3 ? "e4m3" : "e5m2",
               f32_out ? "f32" : "bf16", err);
  EXPECT_LT(err, f32_out ? kBoundF32 : kBoundBf16);
}

INSTANTIATE_TEST_SUITE_P(
    RecipePairs, CudaGroupedGemm,
    ::testing::Combine(::testing::Values(std::make_tuple(ScaleMode::row, ScaleMode::row),
                                         std::make_tuple(ScaleMode::vec128, ScaleMode::vec128),
                                         std::make_tuple(ScaleMode::vec128, ScaleMode::block128)),
                       ::testing::Values(Fp8Format::e4m3, Fp8Format::e5m2), ::testing::Bool()),
    [](const auto& case_info) { return gemm_case_name(case_info.param); });


// The CUDA linear under each recipe against the CPU linear: every cast (both layouts, scales
// included) the same bytes, y, dX and dW within the bounds above.
class CudaLinearRecipes : public ::testing::TestWithParam<std::tuple<Fp8Recipe, bool>> {};

TEST_P(CudaLinearRecipes, MatchTheCpuLinear) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const auto [recipe, bf16_wgrad] = GetParam();
  const Fp8Options o{recipe, bf16_wgrad};
  const std::int64_t m = 512, k = 384, n = 256;
  const std::uint64_t seed = testing::fresh_seed();
  const HostTensor x = ragged(m, k, seed), w = ragged(n, k, seed + 1, 0.05f);
  const HostTensor dy = testing::random_normal(DType::bf16, {m, n}, seed, 3, 1e-3f);
  const LinearConfig cpu{LinearPrecision::fp8, "blocks.0.mlp.fc", o};
  LinearSavedHost saved(LinearPrecision::fp8, m, k, n, o);
  LinearScratchHost scratch(LinearPrecision::fp8, m, n, o);
  HostTensor y(DType::bf16, {m, n}), dx(DType::bf16, {m, k}), dw(DType::f32, {n, k});
  linear_forward_cpu(cpu, x, w, y, saved.saved);
  linear_backward_cpu(cpu, saved.saved, dy, dx, dw, scratch.scratch);

  DeviceArena arena{std::size_t{1} << 28};
  CublasLtGemm gemm;
  LinearCudaConfig config;
  config.mode = LinearCudaMode::fp8_fused;
  config.name = cpu.name;
  config.fp8 = o;
  LinearCudaOverlap overlap;
  config.overlap = &overlap;
  const DeviceTensor gx = to_device(x.view()), gw = to_device(w.view()), gdy = to_device(dy.view());
  DeviceTensor gy = testing::poisoned_device(DType::bf16, {m, n});
  DeviceTensor gdx = testing::poisoned_device(DType::bf16, {m, k});
  DeviceTensor gdw = testing::poisoned_device(DType::f32, {n, k});
  LinearSavedCuda gs = alloc_linear_saved_cuda(arena, config.mode, m, k, n, nullptr, o);
  LinearScratch gsc = alloc_linear_scratch_cuda(arena, config.mode, m, n, o);
  linear_forward_cuda(gemm, config, gx.view(), gw.view(), gy.view(), gs, nullptr);
  linear_backward_cuda(gemm, config, gs, gdy.view(), gdx.view(), gdw.view(), gsc, false, nullptr);
  linear_check_finite_cuda(config, gs, 0, nullptr);
  const LinearSaved& s = saved.saved;
  expect_same_bytes(s.xq, gs.xq, "xq");
  expect_same_bytes(s.wq, gs.wq, "wq");
  expect_same_bytes(s.wq_t, gs.wq_t, "wq_t");
  expect_same_bytes(scratch.scratch.dyq, gsc.dyq, "dyq");
  if (!bf16_wgrad) {
    expect_same_bytes(s.xq_t, gs.xq_t, "xq_t");
    expect_same_bytes(scratch.scratch.dyq_t, gsc.dyq_t, "dyq_t");
  }
  if (recipe != Fp8Recipe::tensorwise) {
    expect_same_bytes(s.xq_inv, gs.xq_inv, "xq scales");
    expect_same_bytes(s.wq_inv, gs.wq_inv, "wq scales");
    expect_same_bytes(s.wq_t_inv, gs.wq_t_inv, "wq_t scales");
    expect_same_bytes(scratch.scratch.dyq_inv, gsc.dyq_inv, "dyq scales");
    if (!bf16_wgrad) {
      expect_same_bytes(s.xq_t_inv, gs.xq_t_inv, "xq_t scales");
      expect_same_bytes(scratch.scratch.dyq_t_inv, gsc.dyq_t_inv, "dyq_t scales");
    }
  }
  const HostTensor hy = to_host(gy.view()), hdx = to_host(gdx.view()), hdw = to_host(gdw.view());
  const double ey = testing::relative_frobenius(hy.view(), y.view());
  const double edx = testing::relative_frobenius(hdx.view(), dx.view());
  const double edw = testing::relative_frobenius(hdw.view(), dw.view());
  std::fprintf(stderr, "[measured] CUDA vs CPU linear, %s%s: y %.2e, dX %.2e, dW %.2e\n",
               fp8_recipe_name(recipe), bf16_wgrad ? " (bf16 wgrad)" : "", ey, edx, edw);
  EXPECT_LT(ey, kBoundBf16);
  EXPECT_LT(edx, kBoundBf16);
  EXPECT_LT(edw, kBoundF32);
}

INSTANTIATE_TEST_SUITE_P(AllRecipes, CudaLinearRecipes,
                         ::testing::Combine(::testing::Values(Fp8Recipe::tensorwise,
                                                              Fp8Recipe::rowwise,
                                                              Fp8Recipe::blockwise),
                                            ::testing::Bool()));

// The linear op's weight gradient added into a bf16 dW (PrecisionConfig::grads) through the
// CUDA backend, in BF16 mode and under each recipe with either wgrad GEMM: dW = bf16(dW0 + P), P
// the op's own f32 dW (the same backward into an f32 dW). The FP8 wgrad writes its product in f32
// through the plan an f32 dW takes and adds it once (cuBLASLt's FP8 GEMMs round the product to
// bf16 before they add a bf16 C), so it must give the bits of bf16(dW0 + P). The BF16 GEMMs add
// in their epilogue, under a plan of their own whose summation order may differ from the f32
// dW's: one bf16 rounding (<= 2^-8 relative) plus that reordering apart, kBoundBf16 (their bits
// are checked on exact operands in test_cuda_gemm.cpp). dW0 is drawn at P's scale, so a dW0
// left out would miss by about 0.7.
// dW0 (bf16) + P (f32) in f32, and that sum rounded once to bf16: what a bf16 gradient holds.
struct DwSum {
  HostTensor f32, bf16;
};
DwSum dw_sum(const HostTensor& dw0, const HostTensor& p) {
  DwSum s{HostTensor(DType::f32, p.shape()), HostTensor(DType::bf16, p.shape())};
  for (std::int64_t i = 0; i < p.numel(); ++i) {
    s.f32.as<float>()[i] = bf16_to_float(dw0.as<std::uint16_t>()[i]) + p.as<float>()[i];
    s.bf16.as<std::uint16_t>()[i] = float_to_bf16(s.f32.as<float>()[i]);
  }
  return s;
}

struct Bf16GradCase {
  LinearMode mode;
  Fp8Options fp8;
};

class CudaLinearBf16Grad : public ::testing::TestWithParam<Bf16GradCase> {};

TEST_P(CudaLinearBf16Grad, AccumulatesOntoTheBf16Gradient) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const Bf16GradCase c = GetParam();
  const std::int64_t m = 512, k = 384, n = 256;
  const std::uint64_t seed = testing::fresh_seed();
  const HostTensor x = ragged(m, k, seed), w = ragged(n, k, seed + 1, 0.05f);
  const HostTensor dy = testing::random_normal(DType::bf16, {m, n}, seed, 3, 1e-3f);
  auto backend = make_cuda_backend();
  backend->set_fp8_options(c.fp8);
  const DeviceTensor gx = to_device(x.view()), gw = to_device(w.view()), gdy = to_device(dy.view());
  DeviceTensor gy = testing::poisoned_device(DType::bf16, {m, n});
  DeviceTensor gdx = testing::poisoned_device(DType::bf16, {m, k});
  DeviceTensor dw_f32 = testing::poisoned_device(DType::f32, {n, k});
  auto saved = backend->linear_forward(c.mode, gx.view(), gw.view(), gy.view(), "blocks.0.proj");
  backend->linear_backward(*saved, gdy.view(), gdx.view(), dw_f32.view(), {}, GradWrite::overwrite);
  backend->synchronize();
  const HostTensor p = to_host(dw_f32.view());
  double sum_sq = 0;
  for (std::int64_t i = 0; i < p.numel(); ++i) sum_sq += std::pow(p.as<float>()[i], 2);
  const auto rms = static_cast<float>(std::sqrt(sum_sq / static_cast<double>(p.numel())));
  ASSERT_GT(rms, 0.f);
  const HostTensor dw0 = testing::random_normal(DType::bf16, {n, k}, seed, 9, rms);
  DeviceTensor dw_bf16 = to_device(dw0.view());
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());  // the upload lands before the backend's stream
  backend->linear_backward(*saved, gdy.view(), gdx.view(), dw_bf16.view(), {},
                           GradWrite::accumulate);
  backend->synchronize();
  const DwSum want = dw_sum(dw0, p);
  const bool fp8_wgrad = c.mode == LinearMode::fp8 && !c.fp8.bf16_wgrad;
  const double err = testing::relative_frobenius(to_host(dw_bf16.view()).view(), want.f32.view());
  std::fprintf(stderr, "[measured] CUDA linear %s %s%s, bf16 dW += P vs f32: %.2e\n",
               c.mode == LinearMode::fp8 ? "fp8" : "bf16", fp8_recipe_name(c.fp8.recipe),
               c.fp8.bf16_wgrad ? " (bf16 wgrad)" : "", err);
  if (fp8_wgrad)
    expect_same_bytes(want.bf16.view(), dw_bf16.view(), "bf16 dW = bf16(dW0 + f32 dW)");
  else
    EXPECT_LT(err, kBoundBf16);
}

// The CUDA linear layer itself: an FP8 wgrad adding into a bf16 dW goes through the f32 scratch
// the caller gives (linear_wgrad_stages_f32), giving bf16(dW0 + P) bit for bit, P the same
// backward's f32 dW; without that scratch the call is refused, naming it.
TEST(CudaLinearBf16GradLayer, Fp8WgradIntoBf16GoesThroughItsF32Scratch) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::int64_t m = 128, k = 128, n = 128;
  const std::uint64_t seed = testing::fresh_seed();
  DeviceArena arena{std::size_t{1} << 26};
  CublasLtGemm gemm;
  LinearCudaConfig config;
  config.mode = LinearCudaMode::fp8_fused;
  config.name = "blocks.0.proj";
  EXPECT_TRUE(linear_wgrad_stages_f32(config, DType::bf16, true));
  EXPECT_FALSE(linear_wgrad_stages_f32(config, DType::bf16, false));
  EXPECT_FALSE(linear_wgrad_stages_f32(config, DType::f32, true));
  const DeviceTensor gx = to_device(testing::random_normal(DType::bf16, {m, k}, seed, 1).view());
  const DeviceTensor gw = to_device(testing::random_normal(DType::bf16, {n, k}, seed, 2).view());
  const DeviceTensor gdy = to_device(testing::random_normal(DType::bf16, {m, n}, seed, 3).view());
  DeviceTensor gy(DType::bf16, {m, n}), gdx(DType::bf16, {m, k}), p32(DType::f32, {n, k});
  LinearSavedCuda gs = alloc_linear_saved_cuda(arena, config.mode, m, k, n, nullptr);
  LinearScratch gsc = alloc_linear_scratch_cuda(arena, config.mode, m, n);
  linear_forward_cuda(gemm, config, gx.view(), gw.view(), gy.view(), gs, nullptr);
  linear_backward_cuda(gemm, config, gs, gdy.view(), gdx.view(), p32.view(), gsc, false, nullptr);
  const HostTensor dw0 = testing::random_normal(DType::bf16, {n, k}, seed, 9, 1e-2f);
  DeviceTensor dw = to_device(dw0.view());
  const Error e = testing::error_of([&] {
    linear_backward_cuda(gemm, config, gs, gdy.view(), gdx.view(), dw.view(), gsc, true, nullptr);
  });
  EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
  EXPECT_NE(e.message().find("scratch dw_f32"), std::string::npos) << e.what();
  gsc.dw_f32 = arena.tensor(DType::f32, {n, k}, "test dw_f32");
  linear_backward_cuda(gemm, config, gs, gdy.view(), gdx.view(), dw.view(), gsc, true, nullptr);
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  expect_same_bytes(dw_sum(dw0, to_host(p32.view())).bf16.view(), dw.view(),
                    "bf16 dW = bf16(dW0 + f32 dW)");
}

INSTANTIATE_TEST_SUITE_P(
    ModesAndRecipes, CudaLinearBf16Grad,
    ::testing::Values(Bf16GradCase{LinearMode::bf16, {}},
                      Bf16GradCase{LinearMode::fp8, {Fp8Recipe::tensorwise, false}},
                      Bf16GradCase{LinearMode::fp8, {Fp8Recipe::rowwise, false}},
                      Bf16GradCase{LinearMode::fp8, {Fp8Recipe::blockwise, false}},
                      Bf16GradCase{LinearMode::fp8, {Fp8Recipe::tensorwise, true}},
                      Bf16GradCase{LinearMode::fp8, {Fp8Recipe::blockwise, true}}),
    [](const auto& case_info) {
      const Bf16GradCase& c = case_info.param;
      if (c.mode == LinearMode::bf16) return std::string("bf16");
      return std::string(fp8_recipe_name(c.fp8.recipe)) +
             (c.fp8.bf16_wgrad ? "_bf16_wgrad" : "_fp8_wgrad");
    });

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
