// The CUDA twins of the CPU reference casts (fp8lab/fp8_scaling.hpp), with device-side scales.
//
// Current scaling without host round trips: amax_scale_cuda() reduces max|x| on the device and its
// last block writes amax, scale and inv_scale into an Fp8Meta in device memory; the casts read the
// scale from there and the FP8 GEMMs take &meta->inv_scale as their scale pointer. Nothing syncs.
// A non-finite amax sets meta->nonfinite (and scale = 1, so the step finishes); the caller checks
// the metas once per step (check_fp8_meta_finite), which throws ErrorKind::non_finite naming the
// tensor, as current_scale_cpu() does at once on the CPU.
//
// Results are bit-identical to the CPU functions: same bytes, same amax/scale/inv_scale, same
// saturation and underflow counts (accumulated into the meta; amax_scale_cuda resets them).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fp8lab/fp8_meta.hpp"
#include "fp8lab/fp8_scaling.hpp"
#include "fp8lab/tensor.hpp"

namespace fp8lab {

class DeviceArena;

Fp8Meta* alloc_fp8_meta(DeviceArena& arena, int count, cudaStream_t stream);

// amax of x (f32 or bf16, any shape) and the scale for `format`, written into *meta.
void amax_scale_cuda(const TensorView& x, Fp8Format format, Fp8Meta* meta, cudaStream_t stream);

// q = satfinite_rne(x * meta->scale): x f32/bf16, q fp8_dtype(format) of x's shape. `work`
// (fp8_meta.hpp): take the scale from a producer's meta instead, and flag a non-finite amax,
// inside the same launch.
void quantize_cuda(const TensorView& x, Fp8Format format, Fp8Meta* meta, const TensorView& q,
                   cudaStream_t stream, const CastMetaWork& work = {});

// qt [cols, rows] = transpose of the fp8 tensor q [rows, cols].
void transpose_fp8_cuda(const TensorView& q, const TensorView& qt, cudaStream_t stream);

// One read of 2-D x: q [rows, cols] and qt [cols, rows] with the same bytes as quantize_cuda +
// transpose_fp8_cuda.
void quantize_transpose_cuda(const TensorView& x, Fp8Format format, Fp8Meta* meta,
                             const TensorView& q, const TensorView& qt, cudaStream_t stream,
                             const CastMetaWork& work = {});

// Host view of a meta (synchronises the stream).
struct Fp8MetaHost {
  Fp8Scale scale;
  CastCounts counts;
  bool nonfinite = false;
};
std::vector<Fp8MetaHost> read_fp8_meta(const Fp8Meta* metas, int count, cudaStream_t stream);

// The step-boundary check: one copy of `names.size()` metas; throws ErrorKind::non_finite
// "non-finite amax in tensor '<name>' at step <step>" for the first flagged tensor.
void check_fp8_meta_finite(const Fp8Meta* metas, const std::vector<std::string>& names,
                           std::int64_t step, cudaStream_t stream);

// The hardware conversion (cvt.rn.satfinite) against float_to_fp8 over all 2^32 fp32 patterns.
struct Fp8CvtProbe {
  unsigned long long mismatches_e4m3 = 0;
  unsigned long long mismatches_e5m2 = 0;
  std::uint32_t first_mismatch_bits = 0;  // an fp32 pattern where they differ (if any)
};
Fp8CvtProbe probe_fp8_hw_conversion();
// The kernels use the hardware conversion only when the probe found no mismatch (cached).
bool fp8_hw_conversion_exact();

// Number of differing bytes between two device buffers of equal size (bitwise comparisons).
std::uint64_t count_byte_mismatches_cuda(const TensorView& a, const TensorView& b,
                                         cudaStream_t stream);

}  // namespace fp8lab
