// Fp8Meta: the per-tensor scaling state that lives in device memory (see fp8lab/fp8_cuda.hpp).
// Kept free of fmt and the tensor headers so CUDA translation units can include it.
#pragma once

#include <cstdint>

namespace fp8lab {

// One per cast tensor, in device memory. Zero-initialise (alloc_fp8_meta does) before first use.
// inv_scale comes first and the struct is 16-byte aligned: cuBLASLt's FP8 kernels refused
// (CUBLAS_STATUS_NOT_SUPPORTED) scale pointers that were only 8-byte aligned.
struct alignas(16) Fp8Meta {
  float inv_scale;  // the GEMMs read this through their scale pointers
  float scale;
  float amax;
  std::uint32_t nonfinite;       // 1 when the last amax was NaN or inf
  unsigned long long saturated;  // counts since the last amax_scale_cuda on this meta
  unsigned long long underflow;
  std::uint32_t amax_bits_accum;  // reduction scratch: 0 between kernels
  std::uint32_t blocks_done;      // last-block ticket: 0 between kernels
};

// What a cast kernel does besides casting, so that a linear needs no separate launches for it
// (each was a few microseconds of an otherwise idle GPU, hundreds of times a step).
struct CastMetaWork {
  // A producer-fused amax (AmaxSlot in backend.hpp): the cast takes its scale from *given, and
  // its first thread copies given's inv_scale, scale, amax and non-finite flag into the cast's
  // own meta. The caller has zeroed that meta (its counters and scratch stay the cast's).
  // Null: the cast's meta already holds the scale (amax_scale_cuda filled it).
  const Fp8Meta* given = nullptr;
  // `given` holds only the producer's accumulated keys (amax_bits_accum; a deferred AmaxSlot):
  // every thread derives the scale from them, and the first thread writes the amax, scale,
  // inv_scale and non-finite flag they give into the cast's own meta.
  bool given_deferred = false;
  // Non-null: when the scale's amax was NaN or inf, atomicMin(first_nonfinite, nonfinite_id),
  // the order-free "which tensor went bad first" of the CUDA backend.
  int* first_nonfinite = nullptr;
  int nonfinite_id = 0;
};

}  // namespace fp8lab
