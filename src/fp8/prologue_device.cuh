// The input prologues of the amax and cast kernels (Prologue in fp8_launch.hpp).
#pragma once

#include "fp8lab/fp8_format.hpp"
#include "fp8_launch.hpp"
#include "nn/gelu_device.cuh"

namespace fp8lab::detail {

// v as the kernel should see it: v itself, or GELU(v) rounded to bf16 by nearest even, as the
// GELU kernel stores it (a NaN stays a NaN).
template <Prologue P>
__device__ __forceinline__ float apply_prologue(float v) {
  if constexpr (P == Prologue::gelu_bf16) {
    return bf16_to_float(float_to_bf16(gelu_device::gelu_value(v)));
  } else {
    return v;
  }
}

// Calls f.template operator()<P>() with the prologue as a compile-time value.
template <typename F>
void dispatch_prologue(Prologue p, F&& f) {
  if (p == Prologue::gelu_bf16)
    f.template operator()<Prologue::gelu_bf16>();
  else
    f.template operator()<Prologue::none>();
}

}  // namespace fp8lab::detail
