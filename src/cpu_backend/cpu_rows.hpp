// Row access for the CPU ops: activations may be f32 or bf16, so every op loads rows into fp32
// scratch, computes in fp32, and stores with one round-to-nearest-even to bf16 where needed.
// Keeping the dtype switch here means each op is written once, in fp32.
#pragma once

#include "fp8lab/fp8_format.hpp"
#include "fp8lab/tensor.hpp"

#include <cstdint>

namespace fp8lab::cpu {

// Accepts f32 or bf16 views; anything else is an error naming the tensor.
void check_activation(const TensorView& t, const char* what);

inline float load_at(const TensorView& t, std::int64_t i) {
  return t.dtype == DType::f32 ? t.as<const float>()[i]
                               : bf16_to_float(t.as<const std::uint16_t>()[i]);
}

inline void store_at(const TensorView& t, std::int64_t i, float v) {
  if (t.dtype == DType::f32) {
    t.as<float>()[i] = v;
  } else {
    t.as<std::uint16_t>()[i] = float_to_bf16(v);
  }
}

// out[0..n) = t[offset .. offset + n) as fp32.
inline void load_span(const TensorView& t, std::int64_t offset, std::int64_t n, float* out) {
  if (t.dtype == DType::f32) {
    const float* p = t.as<const float>() + offset;
    for (std::int64_t i = 0; i < n; ++i) out[i] = p[i];
  } else {
    const std::uint16_t* p = t.as<const std::uint16_t>() + offset;
    for (std::int64_t i = 0; i < n; ++i) out[i] = bf16_to_float(p[i]);
  }
}

inline void store_span(const TensorView& t, std::int64_t offset, std::int64_t n, const float* in) {
  if (t.dtype == DType::f32) {
    float* p = t.as<float>() + offset;
    for (std::int64_t i = 0; i < n; ++i) p[i] = in[i];
  } else {
    std::uint16_t* p = t.as<std::uint16_t>() + offset;
    for (std::int64_t i = 0; i < n; ++i) p[i] = float_to_bf16(in[i]);
  }
}

// t[offset + i] += in[i] (one rounding per element for bf16 targets).
inline void accumulate_span(const TensorView& t, std::int64_t offset, std::int64_t n,
                            const float* in) {
  if (t.dtype == DType::f32) {
    float* p = t.as<float>() + offset;
    for (std::int64_t i = 0; i < n; ++i) p[i] += in[i];
  } else {
    std::uint16_t* p = t.as<std::uint16_t>() + offset;
    for (std::int64_t i = 0; i < n; ++i) p[i] = float_to_bf16(bf16_to_float(p[i]) + in[i]);
  }
}

}  // namespace fp8lab::cpu
