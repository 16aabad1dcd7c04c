// Helpers of the C ABI tests (fp8lab/linear_c.h, libfp8lab_linear.so): owning wrappers of its
// handles, the recipes, and the comparison of the ABI with the backend's linear op (the C++
// layer) bit for bit on either backend.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "common/test_data.hpp"
#include "fp8lab/backend.hpp"
#include "fp8lab/fp8_recipe.hpp"
#include "fp8lab/linear_c.h"

namespace fp8lab::testing {

inline std::string last_error() { return fp8lab_linear_last_error(); }

// A failed call: its status, and a message containing every fragment.
inline void expect_error(int status, int want_status,
                         std::initializer_list<const char*> fragments) {
  EXPECT_EQ(status, want_status) << last_error();
  const std::string message = last_error();
  for (const char* f : fragments) EXPECT_NE(message.find(f), std::string::npos) << message;
}

// A recipe and the M, K, N of a parameterised test, and its name ("rowwise_48x80x112").
using ShapeCase = std::tuple<const char*, std::int64_t, std::int64_t, std::int64_t>;
inline std::string shape_case_name(const ShapeCase& c) {
  return std::string(std::get<0>(c)) + "_" + std::to_string(std::get<1>(c)) + "x" +
         std::to_string(std::get<2>(c)) + "x" + std::to_string(std::get<3>(c));
}
inline std::string shape_case_test_name(const ::testing::TestParamInfo<ShapeCase>& info) {
  return shape_case_name(info.param);
}

// Shapes every recipe takes on both backends, then `extra`: odd multiples of 16 (the FP8 GEMMs)
// and of 128 (blockwise), with M, K and N all different.
inline std::vector<ShapeCase> legal_shape_cases(std::vector<ShapeCase> extra = {}) {
  std::vector<ShapeCase> cases;
  for (const char* recipe : {"bf16", "tensorwise", "rowwise"}) {
    cases.emplace_back(recipe, 208, 48, 80);
    cases.emplace_back(recipe, 16, 272, 176);
  }
  cases.emplace_back("blockwise", 128, 384, 256);
  cases.emplace_back("blockwise", 384, 128, 256);
  cases.insert(cases.end(), extra.begin(), extra.end());
  return cases;
}

struct LinearDeleter {
  void operator()(fp8lab_linear* p) const { EXPECT_EQ(fp8lab_linear_destroy(p), FP8LAB_LINEAR_OK); }
};
struct SavedDeleter {
  void operator()(fp8lab_linear_saved* p) const {
    EXPECT_EQ(fp8lab_linear_saved_destroy(p), FP8LAB_LINEAR_OK);
  }
};
using LinearHandle = std::unique_ptr<fp8lab_linear, LinearDeleter>;
using SavedHandle = std::unique_ptr<fp8lab_linear_saved, SavedDeleter>;

// A linear that must be created (the test fails with the library's message otherwise).
inline LinearHandle make_linear(const char* backend, const char* recipe, std::int64_t in,
                                std::int64_t out) {
  fp8lab_linear* p = nullptr;
  const int status = fp8lab_linear_create(backend, recipe, in, out, &p);
  EXPECT_EQ(status, FP8LAB_LINEAR_OK) << last_error();
  return LinearHandle(p);
}

// The recipes of the ABI and what the backend's linear op runs for each.
struct RecipeCase {
  const char* name;
  LinearMode mode;
  Fp8Options fp8;
};
inline const std::vector<RecipeCase>& recipe_cases() {
  static const std::vector<RecipeCase> cases{
      {"bf16", LinearMode::bf16, {}},
      {"tensorwise", LinearMode::fp8, {Fp8Recipe::tensorwise, false}},
      {"rowwise", LinearMode::fp8, {Fp8Recipe::rowwise, false}},
      {"blockwise", LinearMode::fp8, {Fp8Recipe::blockwise, false}}};
  return cases;
}
inline const RecipeCase& recipe_case(const std::string& name) {
  for (const RecipeCase& c : recipe_cases())
    if (name == c.name) return c;
  throw std::invalid_argument("no recipe case " + name);
}

// Inputs whose rows span 2^-10 .. 2^10 (tokens differ in magnitude, and the tensorwise casts
// underflow on the small rows, so their counts are not trivially zero).
struct LinearProblem {
  HostTensor x, w, dy, dw_start;  // dw_start: what an accumulating dW holds before
  LinearProblem(std::int64_t m, std::int64_t k, std::int64_t n, std::uint64_t seed)
      : x(random_normal(DType::bf16, {m, k}, seed, 1)),
        w(random_normal(DType::bf16, {n, k}, seed, 2, 0.05f)),
        dy(random_normal(DType::bf16, {m, n}, seed, 3, 1e-3f)),
        dw_start(random_normal(DType::f32, {n, k}, seed, 4, 1e-2f)) {
    auto* p = x.as<std::uint16_t>();
    for (std::int64_t r = 0; r < m; ++r)
      for (std::int64_t c = 0; c < k; ++c)
        p[r * k + c] = float_to_bf16(bf16_to_float(p[r * k + c]) *
                                     std::ldexp(1.0f, static_cast<int>(r % 21) - 10));
  }
};

// y, dX and dW of one run, on the host.
struct LinearOutputs {
  HostTensor y, dx, dw;
};

inline HostTensor download(Backend& b, const TensorView& t) {
  HostTensor h(t.dtype, t.shape);
  b.download(t, h.as<void>());
  return h;
}

inline void expect_same_bits(const HostTensor& want, const HostTensor& got, const char* what) {
  ASSERT_EQ(want.nbytes(), got.nbytes()) << what;
  std::int64_t differing = 0, first = -1;
  const auto* a = want.as<const std::uint8_t>();
  const auto* b = got.as<const std::uint8_t>();
  for (std::size_t i = 0; i < want.nbytes(); ++i)
    if (a[i] != b[i] && differing++ == 0) first = static_cast<std::int64_t>(i);
  EXPECT_EQ(differing, 0) << what << ": " << differing << " of " << want.nbytes()
                          << " bytes differ, first at byte " << first;
}

// dw_start in `dtype` (f32, or bf16 rounded to nearest even).
inline HostTensor dw_start_as(const LinearProblem& p, DType dtype) {
  HostTensor t(dtype, p.dw_start.shape());
  const auto* start = p.dw_start.as<const float>();
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DType::f32)
      t.as<float>()[i] = start[i];
    else
      t.as<std::uint16_t>()[i] = float_to_bf16(start[i]);
  }
  return t;
}

// The backend's buffers of one problem: the inputs uploaded, the outputs poisoned (dW, of
// `dw_dtype`, holding dw_start when the run accumulates).
struct BackendBuffers {
  Buffer x, w, dy, y, dx, dw;
  BackendBuffers(Backend& b, const LinearProblem& p, bool accumulate, DType dw_dtype) {
    const std::int64_t m = p.x.shape()[0], k = p.x.shape()[1], n = p.w.shape()[0];
    const auto make = [&](DType dtype, const Shape& shape, const void* host) {
      Buffer buf = b.allocate(MemoryKind::activations, dtype, shape, "capi test");
      if (host != nullptr) {
        b.upload(buf, host);
      } else {
        const HostTensor poison = poisoned(dtype, shape);
        b.upload(buf, poison.as<void>());
      }
      return buf;
    };
    x = make(DType::bf16, {m, k}, p.x.as<void>());
    w = make(DType::bf16, {n, k}, p.w.as<void>());
    dy = make(DType::bf16, {m, n}, p.dy.as<void>());
    y = make(DType::bf16, {m, n}, nullptr);
    dx = make(DType::bf16, {m, k}, nullptr);
    const HostTensor start = dw_start_as(p, dw_dtype);
    dw = make(dw_dtype, {n, k}, accumulate ? start.as<void>() : nullptr);
    b.synchronize();
  }
  LinearOutputs outputs(Backend& b) const {
    return {download(b, y), download(b, dx), download(b, dw)};
  }
};

// Forward and backward through the backend's own linear op (the C++ layer).
inline LinearOutputs run_backend_linear(Backend& b, const RecipeCase& rc, const LinearProblem& p,
                                        bool accumulate, DType dw_dtype) {
  b.set_fp8_options(rc.fp8);
  const BackendBuffers buf(b, p, accumulate, dw_dtype);
  auto ctx = b.linear_forward(rc.mode, buf.x, buf.w, buf.y, "linear");
  b.linear_backward(*ctx, buf.dy, buf.dx, buf.dw, {},
                    accumulate ? GradWrite::accumulate : GradWrite::overwrite);
  b.synchronize();
  return buf.outputs(b);
}

// What fp8lab_linear_scales and fp8lab_linear_counts report for a saved state.
struct AbiStats {
  std::vector<float> scales = std::vector<float>(FP8LAB_LINEAR_STATS_LEN, -1.f);
  std::vector<std::int64_t> counts = std::vector<std::int64_t>(FP8LAB_LINEAR_STATS_LEN, -1);
};

inline AbiStats read_stats(const fp8lab_linear_saved* saved) {
  AbiStats s;
  EXPECT_EQ(fp8lab_linear_scales(saved, s.scales.data(), FP8LAB_LINEAR_STATS_LEN), FP8LAB_LINEAR_OK)
      << last_error();
  EXPECT_EQ(fp8lab_linear_counts(saved, s.counts.data(), FP8LAB_LINEAR_STATS_LEN), FP8LAB_LINEAR_OK)
      << last_error();
  return s;
}

struct AbiRun {
  LinearOutputs out;
  AbiStats stats;
};

// Forward and backward through the C ABI on the same kind of memory; `stream` is handed to
// every call and `wait` waits for it.
inline AbiRun run_abi_linear(Backend& b, const char* backend, const RecipeCase& rc,
                             const LinearProblem& p, bool accumulate, DType dw_dtype, void* stream,
                             const std::function<void()>& wait) {
  const std::int64_t m = p.x.shape()[0], k = p.x.shape()[1], n = p.w.shape()[0];
  const BackendBuffers buf(b, p, accumulate, dw_dtype);
  const LinearHandle linear = make_linear(backend, rc.name, k, n);
  fp8lab_linear_saved* saved = nullptr;
  EXPECT_EQ(fp8lab_linear_forward(linear.get(), m, buf.x.view().data, FP8LAB_LINEAR_BF16,
                                  buf.w.view().data, FP8LAB_LINEAR_BF16, buf.y.view().data,
                                  FP8LAB_LINEAR_BF16, stream, &saved),
            FP8LAB_LINEAR_OK)
      << last_error();
  const SavedHandle keep(saved);
  EXPECT_EQ(fp8lab_linear_backward(linear.get(), saved, m, buf.dy.view().data, FP8LAB_LINEAR_BF16,
                                   buf.dx.view().data, FP8LAB_LINEAR_BF16, buf.dw.view().data,
                                   dw_dtype == DType::bf16 ? FP8LAB_LINEAR_BF16 : FP8LAB_LINEAR_F32,
                                   accumulate ? 1 : 0, stream),
            FP8LAB_LINEAR_OK)
      << last_error();
  wait();
  return {buf.outputs(b), read_stats(saved)};
}

// The ABI against the backend's own linear op, bit for bit: y, dX and dW (f32 and bf16,
// overwritten, and accumulated onto a random dW). Both stage a bf16 dW's FP8 wgrad through the
// same layer code, so its bits against bf16(dW0 + P) are pinned in test_cuda_recipes.cpp. Returns
// the ABI's statistics of the overwriting run.
inline AbiStats expect_abi_matches_backend(const char* backend, const RecipeCase& rc,
                                           const LinearProblem& p, void* stream,
                                           const std::function<void()>& wait) {
  const std::int64_t m = p.x.shape()[0], k = p.x.shape()[1], n = p.w.shape()[0];
  const std::unique_ptr<Backend> b = make_backend(backend);
  AbiStats stats;
  for (const DType dw_dtype : {DType::f32, DType::bf16}) {
    for (const bool accumulate : {false, true}) {
      SCOPED_TRACE(std::string(backend) + " " + rc.name + " M=" + std::to_string(m) +
                   " K=" + std::to_string(k) + " N=" + std::to_string(n) + " " +
                   std::string(dtype_name(dw_dtype)) +
                   (accumulate ? " dW accumulating" : " dW overwritten"));
      const LinearOutputs want = run_backend_linear(*b, rc, p, accumulate, dw_dtype);
      const AbiRun got = run_abi_linear(*b, backend, rc, p, accumulate, dw_dtype, stream, wait);
      expect_same_bits(want.y, got.out.y, "y");
      expect_same_bits(want.dx, got.out.dx, "dX");
      expect_same_bits(want.dw, got.out.dw, "dW");
      if (!accumulate && dw_dtype == DType::f32) stats = got.stats;
    }
  }
  return stats;
}

}  // namespace fp8lab::testing
