// Tensorwise current amax and scale on the CPU (design.md §2); the oracle for the CUDA twins.
#include "fp8lab/fp8_scaling.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace fp8lab {

DType fp8_dtype(Fp8Format format) { return format == Fp8Format::e4m3 ? DType::e4m3 : DType::e5m2; }

namespace {

struct AmaxPartial {
  float max_abs = 0.0f;  // over the non-NaN elements (inf included)
  bool any_nan = false;
};

// max is order-independent, so the OpenMP split cannot change the result (determinism).
template <typename LoadFloat>
AmaxPartial amax_scan(std::int64_t n, LoadFloat load) {
  float max_abs = 0.0f;
  bool any_nan = false;
#pragma omp parallel for schedule(static) reduction(max                     \
                                                    : max_abs) reduction(|| \
                                                                         : any_nan) if (n > 32768)
  for (std::int64_t i = 0; i < n; ++i) {
    const float a = std::fabs(load(i));
    any_nan = any_nan || (a != a);
    max_abs = a > max_abs ? a : max_abs;  // false for NaN: NaN is tracked by any_nan instead
  }
  return {max_abs, any_nan};
}

// The first non-finite element, for an error message that points at it.
std::int64_t first_non_finite(const TensorView& x) {
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const float v = x.dtype == DType::f32 ? x.as<const float>()[i]
                                          : bf16_to_float(x.as<const std::uint16_t>()[i]);
    if (!std::isfinite(v)) return i;
  }
  return -1;
}

}  // namespace

float amax_cpu(const TensorView& x) {
  check_device(x, Device::cpu, "amax_cpu input");
  AmaxPartial r;
  switch (x.dtype) {
    case DType::f32: {
      const float* p = x.as<const float>();
      r = amax_scan(x.numel(), [p](std::int64_t i) { return p[i]; });
      break;
    }
    case DType::bf16: {
      const std::uint16_t* p = x.as<const std::uint16_t>();
      r = amax_scan(x.numel(), [p](std::int64_t i) { return bf16_to_float(p[i]); });
      break;
    }
    default:
      FP8LAB_FAIL(ErrorKind::dtype, "amax_cpu input must be f32 or bf16, got {}", x.describe());
  }
  return r.any_nan ? std::numeric_limits<float>::quiet_NaN() : r.max_abs;
}

namespace {
[[noreturn]] void fail_non_finite(const TensorView& x, float amax, std::string_view tensor_name) {
  FP8LAB_FAIL(ErrorKind::non_finite,
              "tensor '{}' ({}) has a non-finite amax ({}); first non-finite element at flat "
              "index {}",
              tensor_name, x.describe(), amax, first_non_finite(x));
}
}  // namespace

void check_finite_cpu(const TensorView& x, std::string_view tensor_name) {
  const float amax = amax_cpu(x);
  if (!std::isfinite(amax)) fail_non_finite(x, amax, tensor_name);
}

Fp8Scale current_scale_cpu(const TensorView& x, Fp8Format format, std::string_view tensor_name) {
  return current_scale_from_amax_cpu(x, amax_cpu(x), format, tensor_name);
}

Fp8Scale current_scale_from_amax_cpu(const TensorView& x, float amax, Fp8Format format,
                                     std::string_view tensor_name) {
  if (!std::isfinite(amax)) fail_non_finite(x, amax, tensor_name);
  return scale_from_amax(amax, format);
}

void store_amax_meta_cpu(float amax, Fp8Format format, Fp8Meta& meta) {
  const bool finite = std::isfinite(amax);
  const Fp8Scale s = finite ? scale_from_amax(amax, format) : Fp8Scale{amax, 1.f, 1.f};
  meta = Fp8Meta{};
  meta.amax = amax;
  meta.scale = s.scale;
  meta.inv_scale = s.inv_scale;
  meta.nonfinite = finite ? 0u : 1u;
}

}  // namespace fp8lab
