// Shared test helpers: fresh random tensors, poisoned outputs, relative Frobenius errors, an fp64
// reference GEMM. Header-only: each tests/<area>/ executable includes what it needs.
//
// Fresh inputs every run (house rule): fresh_seed() draws from std::random_device and prints the
// seed; set FP8LAB_TEST_SEED=<n> to replay a failing run with the same data.
#pragma once

#include "fp8lab/error.hpp"
#include "fp8lab/fp8_format.hpp"
#include "fp8lab/rng.hpp"
#include "fp8lab/tensor.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace fp8lab::testing {

inline std::uint64_t fresh_seed() {
  std::uint64_t seed;
  if (const char* env = std::getenv("FP8LAB_TEST_SEED")) {
    seed = std::strtoull(env, nullptr, 10);
  } else {
    std::random_device rd;
    seed = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }
  std::fprintf(stderr, "[fp8lab test] seed %llu (replay: FP8LAB_TEST_SEED=%llu)\n",
               static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  return seed;
}

// Fills a tensor with bytes that decode to NaN in every float dtype (0xFF..): an output element
// that an op forgets to write stays NaN and fails any comparison.
inline void poison(const TensorView& t) { std::memset(t.data, 0xFF, t.nbytes()); }

inline HostTensor poisoned(DType dtype, Shape shape) {
  HostTensor t(dtype, shape);
  poison(t.view());
  return t;
}

// stddev * N(0, 1) from Philox (seed, stream); f32 or bf16 (rounded to nearest even).
inline HostTensor random_normal(DType dtype, Shape shape, std::uint64_t seed, std::uint64_t stream,
                                float stddev = 1.0f) {
  std::vector<float> values(static_cast<std::size_t>(shape.numel()));
  fill_normal(values.data(), shape.numel(), seed, stream, 0.0f, stddev);
  HostTensor t(dtype, shape);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::f32)
      t.as<float>()[i] = values[i];
    else if (dtype == DType::bf16)
      t.as<std::uint16_t>()[i] = float_to_bf16(values[i]);
    else
      FP8LAB_FAIL(ErrorKind::dtype, "random_normal: unsupported dtype {}", dtype_name(dtype));
  }
  return t;
}

// bf16 operands of a linear layer y[m, n] = x[m, k] w[n, k]^T at typical scales: activations
// O(1), weights O(1/sqrt(k)), gradients dy small (Philox streams 1, 2, 3 of `seed`).
struct LinearOperands {
  HostTensor x, w, dy;
};
inline LinearOperands linear_operands(std::int64_t m, std::int64_t k, std::int64_t n,
                                      std::uint64_t seed) {
  return {random_normal(DType::bf16, {m, k}, seed, 1),
          random_normal(DType::bf16, {n, k}, seed, 2, 1.0f / std::sqrt(static_cast<float>(k))),
          random_normal(DType::bf16, {m, n}, seed, 3, 1e-3f)};
}

// Element i of a float-valued tensor (f32, bf16, f64) as a double.
inline double element_as_double(const TensorView& t, std::int64_t i) {
  switch (t.dtype) {
    case DType::f32:
      return t.as<const float>()[i];
    case DType::bf16:
      return bf16_to_float(t.as<const std::uint16_t>()[i]);
    case DType::f64:
      return t.as<const double>()[i];
    default:
      FP8LAB_FAIL(ErrorKind::dtype, "element_as_double: unsupported {}", t.describe());
  }
}

inline std::vector<double> to_f64(const TensorView& t) {
  std::vector<double> out(static_cast<std::size_t>(t.numel()));
  for (std::int64_t i = 0; i < t.numel(); ++i)
    out[static_cast<std::size_t>(i)] = element_as_double(t, i);
  return out;
}

// ||got - ref||_F / ||ref||_F in double. A NaN anywhere gives NaN (so EXPECT_LT fails).
inline double relative_frobenius(const std::vector<double>& got, const std::vector<double>& ref) {
  FP8LAB_CHECK(got.size() == ref.size(), "relative_frobenius: sizes {} and {}", got.size(),
               ref.size());
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    diff2 += (got[i] - ref[i]) * (got[i] - ref[i]);
    ref2 += ref[i] * ref[i];
  }
  return std::sqrt(diff2 / ref2);
}

inline double relative_frobenius(const TensorView& got, const TensorView& ref) {
  FP8LAB_CHECK(got.shape == ref.shape, "relative_frobenius: shapes {} and {}", got.describe(),
               ref.describe());
  return relative_frobenius(to_f64(got), to_f64(ref));
}

// C[M, N] = A[M, K] · B[N, K]ᵀ in fp64, for row-major double matrices. A slow, obvious reference.
inline std::vector<double> gemm_tn_f64(const std::vector<double>& a, const std::vector<double>& b,
                                       std::int64_t m, std::int64_t n, std::int64_t k) {
  std::vector<double> c(static_cast<std::size_t>(m * n));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (std::int64_t p = 0; p < k; ++p)
        acc += a[static_cast<std::size_t>(i * k + p)] * b[static_cast<std::size_t>(j * k + p)];
      c[static_cast<std::size_t>(i * n + j)] = acc;
    }
  }
  return c;
}

// Row-major transpose of a [rows, cols] double matrix.
inline std::vector<double> transpose_f64(const std::vector<double>& a, std::int64_t rows,
                                         std::int64_t cols) {
  std::vector<double> t(a.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      t[static_cast<std::size_t>(c * rows + r)] = a[static_cast<std::size_t>(r * cols + c)];
  return t;
}

// The fp8lab::Error that f throws; a test failure (and a placeholder error) when it throws none.
inline Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected an fp8lab::Error";
  return Error(ErrorKind::internal, "none", "", __FILE__, __LINE__);
}

}  // namespace fp8lab::testing
