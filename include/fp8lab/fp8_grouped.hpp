// Casts with one FP32 scale per group of values (the scaling recipes of fp8lab/fp8_recipe.hpp):
// the CPU reference the CUDA casts (src/fp8/fp8_grouped_cuda.hpp) match byte for byte.
//
// Per group g of the layout (fp8lab/fp8_scale_layout.hpp):
//   amax_g = max |x| over g;  scale_g = scale_from_amax(amax_g)  (fmax / amax_g, 1 for 0)
//   q = satfinite_rne(x * scale_g)   -- the single fp32 product, as the tensorwise cast
//   inv_scales[layout.index(g)] = 1 / scale_g   (what the GEMM multiplies by)
// With ScaleMode::tensor this is exactly the tensorwise cast (current_scale_cpu, quantize_cpu).
// A group whose amax is NaN or inf is an ErrorKind::non_finite error naming the tensor and the
// group, as current_scale_cpu's.
#pragma once

#include "fp8lab/fp8_recipe.hpp"
#include "fp8lab/fp8_scaling.hpp"
#include "fp8lab/tensor.hpp"

#include <string_view>

namespace fp8lab {

struct GroupedCastStats {
  CastCounts counts;
  float amax = 0.0f;  // the largest group amax (the tensor's amax)
  std::int64_t groups = 0;
};

// The layout of x [rows, cols] cast with `mode`.
ScaleLayout scale_layout(ScaleMode mode, const TensorView& x);

// q [rows, cols] (fp8_dtype(format)) from x [rows, cols] (f32 or bf16) with the groups of `mode`;
// inv_scales f32 [layout.count()] (padding entries set to 1).
GroupedCastStats quantize_grouped_cpu(const TensorView& x, Fp8Format format, ScaleMode mode,
                                      const TensorView& q, const TensorView& inv_scales,
                                      std::string_view tensor_name);

// The same cast of xᵀ: qt [cols, rows], with the groups of `mode` laid over xᵀ, inv_scales of
// scale_layout(mode, xᵀ).
GroupedCastStats quantize_grouped_transposed_cpu(const TensorView& x, Fp8Format format,
                                                 ScaleMode mode, const TensorView& qt,
                                                 const TensorView& inv_scales,
                                                 std::string_view tensor_name);

// out [rows, cols] f32 = decode(q) * inv_scale of each element's group (exact decode, one fp32
// product): error reports and the SQNR of `fp8lab quantize`.
void dequantize_grouped_cpu(const TensorView& q, ScaleMode mode, const TensorView& inv_scales,
                            const TensorView& out);

const char* scale_mode_name(ScaleMode mode);  // "tensor", "row", "vec128", "block128"

}  // namespace fp8lab
