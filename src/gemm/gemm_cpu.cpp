// The CPU reference GEMM: C[M, N] = A[M, K] · B[N, K]ᵀ through OpenBLAS sgemm on exact fp32
// copies of the operands. Operand dtypes are dispatched here and only here.
#include "gemm/gemm.hpp"

#include "fp8lab/fp8_format.hpp"
#include "fp8lab/fp8_grouped.hpp"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace fp8lab {
namespace {

enum class GemmKind { f32, bf16, fp8 };

GemmKind gemm_kind(const TensorView& a, const TensorView& b) {
  if (a.dtype == DType::f32 && b.dtype == DType::f32) return GemmKind::f32;
  if (a.dtype == DType::bf16 && b.dtype == DType::bf16) return GemmKind::bf16;
  if (is_fp8(a.dtype) && is_fp8(b.dtype)) {
    FP8LAB_CHECK_KIND(ErrorKind::dtype, !(a.dtype == DType::e5m2 && b.dtype == DType::e5m2),
                      "FP8 GEMM of two e5m2 operands is not supported (cuBLASLt has no such "
                      "kernel): A {}, B {}",
                      a.describe(), b.describe());
    return GemmKind::fp8;
  }
  FP8LAB_FAIL(ErrorKind::dtype,
              "GEMM operands must both be f32, both bf16 or both fp8 (e4m3/e5m2, not e5m2 x "
              "e5m2): A {}, B {}",
              a.describe(), b.describe());
}

// Exact fp32 copy of a [rows, K] operand: f32 as is, bf16 widened, fp8 decoded (no scale: the
// scales are applied to the fp32 accumulator, as cuBLASLt does).
std::vector<float> exact_f32_copy(const TensorView& t) {
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  const std::int64_t n = t.numel();
  switch (t.dtype) {
    case DType::f32: {
      const float* p = t.as<const float>();
      for (std::int64_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = p[i];
      break;
    }
    case DType::bf16: {
      const std::uint16_t* p = t.as<const std::uint16_t>();
#pragma omp parallel for schedule(static) if (n > 32768)
      for (std::int64_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = bf16_to_float(p[i]);
      break;
    }
    case DType::e4m3:
    case DType::e5m2: {
      const Fp8Format f = t.dtype == DType::e4m3 ? Fp8Format::e4m3 : Fp8Format::e5m2;
      std::array<float, 256> decoded;
      for (int c = 0; c < 256; ++c)
        decoded[static_cast<std::size_t>(c)] = fp8_to_float(static_cast<std::uint8_t>(c), f);
      const std::uint8_t* p = t.as<const std::uint8_t>();
#pragma omp parallel for schedule(static) if (n > 32768)
      for (std::int64_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = decoded[p[i]];
      break;
    }
    default:
      FP8LAB_FAIL(ErrorKind::internal, "exact_f32_copy: unexpected {}", t.describe());
  }
  return out;
}

std::string gemm_shapes(const TensorView& a, const TensorView& b, const TensorView& c) {
  return fmt::format("A {}, B {}, C {}", a.describe(), b.describe(), c.describe());
}

}  // namespace

void check_gemm_tn_args(const TensorView& a, const TensorView& b, const TensorView& c,
                        const GemmOptions& options) {
  FP8LAB_CHECK_KIND(ErrorKind::shape,
                    a.shape.rank() == 2 && b.shape.rank() == 2 && c.shape.rank() == 2,
                    "GEMM operands must be 2-D: {}", gemm_shapes(a, b, c));
  const std::int64_t m = a.rows(), k = a.cols(), n = b.rows();
  FP8LAB_CHECK_KIND(ErrorKind::shape, b.cols() == k && c.rows() == m && c.cols() == n,
                    "GEMM C[M,N] = A[M,K]·B[N,K]^T needs matching shapes: {}",
                    gemm_shapes(a, b, c));
  FP8LAB_CHECK_KIND(ErrorKind::shape, m < INT_MAX && n < INT_MAX && k < INT_MAX,
                    "GEMM dimensions exceed the BLAS int range: {}", gemm_shapes(a, b, c));
  const GemmKind kind = gemm_kind(a, b);
  FP8LAB_CHECK_KIND(ErrorKind::dtype, c.dtype == DType::f32 || c.dtype == DType::bf16,
                    "GEMM output must be f32 or bf16: {}", gemm_shapes(a, b, c));
  if (kind == GemmKind::fp8) {
    FP8LAB_CHECK_KIND(
        ErrorKind::shape,
        m % kFp8GemmAlignment == 0 && n % kFp8GemmAlignment == 0 && k % kFp8GemmAlignment == 0,
        "FP8 GEMM needs M, N and K to be multiples of {} (cuBLASLt), got M={}, N={}, "
        "K={}: {}",
        kFp8GemmAlignment, m, n, k, gemm_shapes(a, b, c));
    FP8LAB_CHECK(std::isfinite(options.inv_scale_a) && std::isfinite(options.inv_scale_b),
                 "FP8 GEMM inverse scales must be finite, got {} and {}", options.inv_scale_a,
                 options.inv_scale_b);
    check_gemm_scale_modes(options.scale_mode_a, options.scale_mode_b, n, k,
                           "FP8 GEMM " + gemm_shapes(a, b, c));
    FP8LAB_CHECK((options.scale_mode_a == ScaleMode::tensor) == (options.inv_scales_a == nullptr) &&
                     (options.scale_mode_b == ScaleMode::tensor) ==
                         (options.inv_scales_b == nullptr),
                 "FP8 GEMM {}: grouped scale modes ({}, {}) need their inverse-scale arrays, "
                 "mode tensor takes inv_scale_a / inv_scale_b",
                 gemm_shapes(a, b, c), scale_mode_name(options.scale_mode_a),
                 scale_mode_name(options.scale_mode_b));
  } else {
    FP8LAB_CHECK(options.scale_mode_a == ScaleMode::tensor &&
                     options.scale_mode_b == ScaleMode::tensor && !options.inv_scales_a &&
                     !options.inv_scales_b,
                 "GEMM {}: scale modes apply to FP8 operands only", gemm_shapes(a, b, c));
  }
}

void check_gemm_scale_modes(ScaleMode a, ScaleMode b, std::int64_t n, std::int64_t k,
                            const std::string& what) {
  const bool pair_ok = (a == ScaleMode::tensor && b == ScaleMode::tensor) ||
                       (a == ScaleMode::row && b == ScaleMode::row) ||
                       (a == ScaleMode::vec128 &&
                        (b == ScaleMode::vec128 || b == ScaleMode::block128));
  FP8LAB_CHECK_KIND(ErrorKind::invalid_argument, pair_ok,
                    "{}: scale modes A {} and B {} are not a supported pair (tensor x tensor, row "
                    "x row, vec128 x vec128, vec128 x block128)",
                    what, scale_mode_name(a), scale_mode_name(b));
  if (a == ScaleMode::vec128)
    FP8LAB_CHECK_KIND(ErrorKind::shape, k % kScaleBlock == 0,
                      "{}: 128-wide scale groups need K to be a multiple of {}, got K={}", what,
                      kScaleBlock, k);
  if (b == ScaleMode::block128)
    FP8LAB_CHECK_KIND(ErrorKind::shape, n % kScaleBlock == 0,
                      "{}: 128x128 scale blocks of B need N to be a multiple of {}, got N={}",
                      what, kScaleBlock, n);
}

void gemm_tn_cpu(const TensorView& a, const TensorView& b, const TensorView& c,
                 const GemmOptions& options) {
  for (const TensorView* t : {&a, &b, &c}) check_device(*t, Device::cpu, "gemm_tn_cpu operand");
  check_gemm_tn_args(a, b, c, options);
  const std::int64_t m = a.rows(), k = a.cols(), n = b.rows();
  const std::vector<float> a32 = exact_f32_copy(a), b32 = exact_f32_copy(b);
  const bool fp8 = gemm_kind(a, b) == GemmKind::fp8;
  const ScaleLayout la{options.scale_mode_a, m, k}, lb{options.scale_mode_b, n, k};
  // K blocks: 128 wide when a scale group is (the scales change along K), else all of K.
  const bool blocked = la.group_cols() == kScaleBlock || lb.group_cols() == kScaleBlock;
  const std::int64_t kb = blocked ? kScaleBlock : std::max<std::int64_t>(k, 1);
  // The fp8 epilogue: per K block, one fp32 product of the two inverse scales applied to the
  // block's fp32 accumulator; blocks summed in fp32 in order.
  auto factor = [&](std::int64_t row_a, std::int64_t row_b, std::int64_t k0) {
    if (!fp8) return 1.0f;
    const float sa = options.inv_scales_a ? options.inv_scales_a[la.index_of(row_a, k0)]
                                          : options.inv_scale_a;
    const float sb = options.inv_scales_b ? options.inv_scales_b[lb.index_of(row_b, k0)]
                                          : options.inv_scale_b;
    return sa * sb;
  };
  std::vector<float> total(static_cast<std::size_t>(m * n), 0.0f);
  std::vector<float> acc(static_cast<std::size_t>(m * n));
  for (std::int64_t k0 = 0; k0 < k || (k0 == 0 && k == 0); k0 += kb) {
    const std::int64_t width = std::min(kb, k - k0);
    if (m > 0 && n > 0) {
      const int ld = static_cast<int>(std::max<std::int64_t>(k, 1));
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m),
                  static_cast<int>(n), static_cast<int>(width), 1.0f, a32.data() + k0, ld,
                  b32.data() + k0, ld, 0.0f, acc.data(), static_cast<int>(n));
    }
    const bool first = k0 == 0;
#pragma omp parallel for schedule(static) if (m * n > 32768)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const std::size_t at = static_cast<std::size_t>(i * n + j);
        const float v = acc[at] * factor(i, j, k0);
        total[at] = first ? v : total[at] + v;
      }
    if (k == 0) break;
  }
  const std::int64_t count = m * n;
  if (c.dtype == DType::f32) {
    float* out = c.as<float>();
    const bool add = options.accumulate;
#pragma omp parallel for schedule(static) if (count > 32768)
    for (std::int64_t i = 0; i < count; ++i) {
      const float v = total[static_cast<std::size_t>(i)];
      out[i] = add ? out[i] + v : v;
    }
  } else {
    // bf16 C: cuBLASLt's beta = 1 epilogue, the old value widened, the sum rounded once.
    std::uint16_t* out = c.as<std::uint16_t>();
    const bool add = options.accumulate;
#pragma omp parallel for schedule(static) if (count > 32768)
    for (std::int64_t i = 0; i < count; ++i) {
      const float v = total[static_cast<std::size_t>(i)];
      out[i] = float_to_bf16(add ? bf16_to_float(out[i]) + v : v);
    }
  }
}

}  // namespace fp8lab
