// Tensorwise current scaling (design.md §2) and the CPU reference casts.
//
//   amax = max |x| over the whole tensor (NaN if any element is NaN, else inf if any is inf)
//   scale = fmax / amax in fp32 (fmax 448 for e4m3, 57344 for e5m2); amax == 0 gives scale = 1;
//   a scale that overflows fp32 (amax < ~1.3e-36) is clamped to FLT_MAX
//   q = satfinite_rne(x * scale)   -- the single fp32 product, then float_to_fp8
//   inv_scale = 1 / scale in fp32, handed to the GEMM
//
// A non-finite amax is never absorbed: current_scale_cpu() throws ErrorKind::non_finite naming the
// tensor. The CUDA twins (same names with _cuda, in src/fp8/*.cu) produce bit-identical bytes and
// counts; the CPU functions here are their oracle.
#pragma once

#include "fp8lab/fp8_format.hpp"
#include "fp8lab/fp8_meta.hpp"
#include "fp8lab/tensor.hpp"

#include <cstdint>
#include <string_view>

namespace fp8lab {

struct Fp8Scale {
  float amax = 0.f;
  float scale = 1.f;      // multiply the input by this before the cast
  float inv_scale = 1.f;  // multiply GEMM results by this (per operand)
};

// Scale for a finite amax. Exact fp32 arithmetic, identical on host and device. An amax so small
// (< fmax / FLT_MAX, about 1.3e-36) that fmax / amax overflows gets the largest finite scale
// instead of inf (as TransformerEngine does), so casts and inv_scale stay finite.
FP8LAB_HD Fp8Scale scale_from_amax(float amax, Fp8Format format) {
  constexpr float kMaxFiniteFloat = 3.40282346638528859812e+38f;
  Fp8Scale s;
  s.amax = amax;
  s.scale = amax == 0.0f ? 1.0f : fp8_spec(format).max_value / amax;
  if (s.scale > kMaxFiniteFloat) s.scale = kMaxFiniteFloat;
  s.inv_scale = 1.0f / s.scale;
  return s;
}

// What a cast did, per tensor: cheap to count in the cast kernels.
struct CastCounts {
  std::int64_t saturated = 0;  // |x * scale| beyond the format's range: clamped to ±max
  std::int64_t underflow = 0;  // x != 0 but the fp8 result is ±0
  bool operator==(const CastCounts&) const = default;
};

// The element types a cast reads: f32 or bf16 (bf16 stored as uint16 bit patterns).
// FP8 outputs are DType::e4m3 / DType::e5m2 tensors of uint8 codes.
DType fp8_dtype(Fp8Format format);

// max |x|, with NaN/inf propagated as described above. x: f32 or bf16, any shape.
float amax_cpu(const TensorView& x);

// amax_cpu + scale_from_amax; throws ErrorKind::non_finite "tensor '<name>' ..." on NaN/inf.
Fp8Scale current_scale_cpu(const TensorView& x, Fp8Format format, std::string_view tensor_name);

// current_scale_cpu with the amax already known (a producer-fused amax, AmaxSlot in backend.hpp):
// for amax == amax_cpu(x), the same scale or the same error.
Fp8Scale current_scale_from_amax_cpu(const TensorView& x, float amax, Fp8Format format,
                                     std::string_view tensor_name);

// The host twin of the device amax's last step (amax_scale_cuda): meta gets amax, the scale of
// scale_from_amax (1 and 1 for a non-finite amax), the non-finite flag and zeroed counts.
void store_amax_meta_cpu(float amax, Fp8Format format, Fp8Meta& meta);

// Throws the same ErrorKind::non_finite error as current_scale_cpu when x holds a NaN or inf
// (for paths that need no scale, e.g. the bf16 linear, so both policies reject bad input alike).
void check_finite_cpu(const TensorView& x, std::string_view tensor_name);

// q[i] = float_to_fp8(float(x[i]) * scale). q has x's shape and dtype fp8_dtype(format).
CastCounts quantize_cpu(const TensorView& x, float scale, Fp8Format format, const TensorView& q);

// One pass over 2-D x [rows, cols]: q [rows, cols] and its transpose qt [cols, rows], same bytes.
CastCounts quantize_transpose_cpu(const TensorView& x, float scale, Fp8Format format,
                                  const TensorView& q, const TensorView& qt);

// qt = transpose(q) for 2-D fp8 tensors (q [rows, cols], qt [cols, rows]).
void transpose_fp8_cpu(const TensorView& q, const TensorView& qt);

// Decode fp8 codes to fp32, multiplied by inv_scale (exact: inv_scale is applied in fp32 after
// an exact decode; used by the reference GEMM and by error reports).
void dequantize_cpu(const TensorView& q, float inv_scale, const TensorView& out_f32);

}  // namespace fp8lab
