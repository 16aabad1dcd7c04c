// GELU (tanh form) as the CUDA backend computes it, for every kernel that must produce the
// same bits: the GELU kernels (cuda_gelu.cu) and the FP8 casts that take GELU of their input
// on the way (fp8/, the FP8 MLP's proj reading fc's pre-activation). One definition, so the
// two give the same fp32 value; each then rounds to bf16 the same way (nearest even).
//
// 0.5 v (1 + tanh u) is evaluated as v * sigmoid(2u), u = sqrt(2/pi) (v + 0.044715 v^3); see
// cuda_gelu.cu for why.
#pragma once

namespace fp8lab::gelu_device {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;

__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float rcp_approx(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// sigmoid(2u) = 1 / (1 + exp(-2u)) = 0.5 (1 + tanh u). Large |v|: exp2 gives 0 or +inf and the
// reciprocal 1 or 0, so the value saturates as tanh does.
__device__ __forceinline__ float sigmoid_2u(float v) {
  constexpr float kMinus2UToLog2 = -2.f * 1.4426950408889634f * kSqrt2OverPi;  // -2u = k v (...)
  return rcp_approx(1.f + exp2_approx(kMinus2UToLog2 * v * fmaf(kCubic, v * v, 1.f)));
}

__device__ __forceinline__ float gelu_value(float v) { return v * sigmoid_2u(v); }

}  // namespace fp8lab::gelu_device
