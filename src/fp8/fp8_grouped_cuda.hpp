// The CUDA twin of the grouped casts (fp8lab/fp8_grouped.hpp): the same bytes, inverse scales
// and counts as quantize_grouped_cpu (q) and quantize_grouped_transposed_cpu (qt).
//
// One call casts bf16 x [rows, cols] into q [rows, cols] with the groups of `scaling.q` and,
// when qt is given (data non-null), into qt [cols, rows], the cast of xᵀ with the groups of
// `scaling.qt` (fp8lab/fp8_recipe.hpp). vec128 and block128 read x once (one 128x128 tile per
// CTA); row reads it twice (the rows' and columns' amax first). meta (zeroed here) receives the
// largest group amax, the casts' counts (both casts', or one's when qt is q transposed) and the
// non-finite flag: a group with a NaN or inf amax gets scale 1 and sets it, and `first_nonfinite`
// (optional) takes `nonfinite_id` as CastMetaWork's does; the step-boundary check reports it.
#pragma once

#include <cuda_runtime_api.h>

#include "fp8lab/fp8_meta.hpp"
#include "fp8lab/fp8_recipe.hpp"
#include "fp8lab/tensor.hpp"

namespace fp8lab {

struct GroupedCastCuda {
  TensorView q, q_inv;    // e4m3/e5m2 [rows, cols]; f32 [layout count]
  TensorView qt, qt_inv;  // optional: [cols, rows]; f32 [layout count of xᵀ]
};

void quantize_grouped_cuda(const TensorView& x, Fp8Format format, OperandScaling scaling,
                           const GroupedCastCuda& out, Fp8Meta* meta, cudaStream_t stream,
                           int* first_nonfinite = nullptr, int nonfinite_id = 0);

}  // namespace fp8lab
