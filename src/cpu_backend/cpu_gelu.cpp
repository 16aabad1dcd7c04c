// CPU GELU (tanh approximation, as GPT-2) forward and backward.
#include "cpu_backend/cpu_backend.hpp"
#include "cpu_backend/cpu_rows.hpp"

#include <cmath>

namespace fp8lab::cpu {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;

void check_same(const TensorView& a, const TensorView& b, const char* an, const char* bn) {
  check_activation(a, an);
  check_activation(b, bn);
  FP8LAB_CHECK_KIND(ErrorKind::shape, a.numel() == b.numel(), "gelu: {} {} and {} {} differ", an,
                    a.describe(), bn, b.describe());
}

// tanh(u) = 1 - 2 / (exp(2u) + 1): one expf, several times faster than glibc's tanhf (which
// goes through expm1f) and within a few ulp of it; exp overflow gives exactly 1, as it should.
inline float fast_tanh(float u) {
  return 1.f - 2.f / (std::exp(2.f * u) + 1.f);
}

}  // namespace

void CpuBackend::gelu_forward(const TensorView& x, const TensorView& y, AmaxSlot amax) {
  check_same(x, y, "x", "y");
  const std::int64_t n = x.numel();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = load_at(x, i);
    const float u = kSqrt2OverPi * (v + kCubic * v * v * v);
    store_at(y, i, 0.5f * v * (1.f + fast_tanh(u)));
  }
  store_output_amax(y, amax);
}

void CpuBackend::gelu_backward(const TensorView& x, const TensorView& dy, const TensorView& dx,
                               AmaxSlot amax) {
  check_same(x, dy, "x", "dy");
  check_same(x, dx, "x", "dx");
  const std::int64_t n = x.numel();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = load_at(x, i);
    const float u = kSqrt2OverPi * (v + kCubic * v * v * v);
    const float t = fast_tanh(u);
    const float du = kSqrt2OverPi * (1.f + 3.f * kCubic * v * v);
    const float grad = 0.5f * (1.f + t) + 0.5f * v * (1.f - t * t) * du;
    store_at(dx, i, grad * load_at(dy, i));
  }
  store_output_amax(dx, amax);
}

}  // namespace fp8lab::cpu
