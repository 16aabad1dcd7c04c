// Device helpers shared by the cast kernels: the fp32 -> fp8 conversion (hardware or the exact
// software twin of float_to_fp8), the per-element statistics, and 16-element vector loads.
#pragma once

#include <cuda_fp8.h>

#include <cstdint>

#include "amax_device.cuh"
#include "fp8_launch.hpp"
#include "fp8lab/fp8_format.hpp"
#include "fp8lab/fp8_meta.hpp"

namespace fp8lab::detail {

// Hardware cvt.rn.satfinite: RNE, finite overflow and inf clamp to ±max. NaN is forced to the
// canonical 0x7F that float_to_fp8 writes (PTX leaves the NaN encoding unspecified for us).
template <Fp8Format F>
__device__ __forceinline__ std::uint16_t cvt_pair_hw(float lo, float hi) {
  constexpr __nv_fp8_interpretation_t kind = F == Fp8Format::e4m3 ? __NV_E4M3 : __NV_E5M2;
  std::uint16_t pair = __nv_cvt_float2_to_fp8x2(make_float2(lo, hi), __NV_SATFINITE, kind);
  if (lo != lo) pair = static_cast<std::uint16_t>((pair & 0xFF00u) | 0x7Fu);
  if (hi != hi) pair = static_cast<std::uint16_t>((pair & 0x00FFu) | 0x7F00u);
  return pair;
}

template <Fp8Format F, bool kHw>
__device__ __forceinline__ std::uint16_t cvt_pair(float lo, float hi) {
  if constexpr (kHw) {
    return cvt_pair_hw<F>(lo, hi);
  } else {
    return static_cast<std::uint16_t>(float_to_fp8(lo, F) | (float_to_fp8(hi, F) << 8));
  }
}

// Per-thread counts, as quantize_cpu counts them: saturated where the satfinite clamp changed
// the result, underflow where a non-zero input became ±0.
struct CastTally {
  unsigned saturated = 0;
  unsigned underflow = 0;
};

template <Fp8Format F>
__device__ __forceinline__ void tally(CastTally& t, float x, float y, std::uint8_t code) {
  t.saturated += fp8_saturates(y, F) ? 1u : 0u;
  t.underflow += (x != 0.0f && (code & 0x7Fu) == 0u) ? 1u : 0u;
}

// Block-wide sum of the tallies, then one atomicAdd per block into the meta.
__device__ __forceinline__ void flush_tally(CastTally t, Fp8Meta* meta) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    t.saturated += __shfl_down_sync(0xFFFFFFFFu, t.saturated, offset);
    t.underflow += __shfl_down_sync(0xFFFFFFFFu, t.underflow, offset);
  }
  if ((threadIdx.x & 31) == 0 && (t.saturated | t.underflow) != 0) {
    if (t.saturated) atomicAdd(&meta->saturated, static_cast<unsigned long long>(t.saturated));
    if (t.underflow) atomicAdd(&meta->underflow, static_cast<unsigned long long>(t.underflow));
  }
}

__device__ __forceinline__ float load_elem(const float* p) { return *p; }
__device__ __forceinline__ float load_elem(const std::uint16_t* p) { return bf16_to_float(*p); }

// 16 consecutive elements from a 16-byte aligned address, loaded as 16-byte vectors.
__device__ __forceinline__ void load16(const std::uint16_t* p, float (&v)[16]) {
  const uint4 a = reinterpret_cast<const uint4*>(p)[0];
  const uint4 b = reinterpret_cast<const uint4*>(p)[1];
  const std::uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    v[2 * i] = bits_float(w[i] << 16);
    v[2 * i + 1] = bits_float(w[i] & 0xFFFF0000u);
  }
}

__device__ __forceinline__ void load16(const float* p, float (&v)[16]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float4 f = reinterpret_cast<const float4*>(p)[i];
    v[4 * i] = f.x;
    v[4 * i + 1] = f.y;
    v[4 * i + 2] = f.z;
    v[4 * i + 3] = f.w;
  }
}

// Casts 16 values (already loaded) into 16 fp8 bytes packed in a uint4, tallying as it goes:
// every element converted, checked and counted on its own (the software path, and the hardware
// path's rare chunks: see cast16).
template <Fp8Format F, bool kHw>
__device__ __forceinline__ uint4 cast16_exact(const float (&v)[16], float scale, CastTally& t) {
  std::uint32_t w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float y0 = v[4 * i] * scale, y1 = v[4 * i + 1] * scale;
    const float y2 = v[4 * i + 2] * scale, y3 = v[4 * i + 3] * scale;
    const std::uint32_t lo = cvt_pair<F, kHw>(y0, y1), hi = cvt_pair<F, kHw>(y2, y3);
    w[i] = lo | (hi << 16);
    tally<F>(t, v[4 * i], y0, static_cast<std::uint8_t>(lo));
    tally<F>(t, v[4 * i + 1], y1, static_cast<std::uint8_t>(lo >> 8));
    tally<F>(t, v[4 * i + 2], y2, static_cast<std::uint8_t>(hi));
    tally<F>(t, v[4 * i + 3], y3, static_cast<std::uint8_t>(hi >> 8));
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Whole-word flags for the underflow count (a code of magnitude 0 from an input that is not ±0,
// as quantize_cpu counts it), four elements at a time; only bit 7 of each byte is meaningful.
// Bit 7 of byte j: element j of the four bf16 in w01 (elements 0, 1) and w23 (2, 3) is not ±0 (a
// 15-bit magnitude plus 0x7FFF carries into bit 15 iff it is not zero).
__device__ __forceinline__ std::uint32_t bf16x4_nonzero_bytes(std::uint32_t w01, std::uint32_t w23) {
  return __byte_perm((w01 & 0x7FFF7FFFu) + 0x7FFF7FFFu, (w23 & 0x7FFF7FFFu) + 0x7FFF7FFFu, 0x7531);
}
// Bit 7 of byte j: code j (an fp8 byte) has a magnitude that is not 0.
__device__ __forceinline__ std::uint32_t code_nonzero_bytes(std::uint32_t codes) {
  return (codes & 0x7F7F7F7Fu) + 0x7F7F7F7Fu;
}
// The underflows among four codes: magnitude 0 where the input was not ±0.
__device__ __forceinline__ unsigned underflows4(std::uint32_t code_nonzero, std::uint32_t x_nonzero) {
  return static_cast<unsigned>(__popc(~code_nonzero & x_nonzero & 0x80808080u));
}

// 16 input elements kept as raw 16-byte vectors until converted: all of a thread's loads can be
// issued before the first conversion, with few registers held.
template <typename In>
struct Raw16 {
  static constexpr int kVectors = 16 * static_cast<int>(sizeof(In)) / 16;
  uint4 v[kVectors];
  __device__ __forceinline__ void load(const In* p) {
#pragma unroll
    for (int i = 0; i < kVectors; ++i) v[i] = reinterpret_cast<const uint4*>(p)[i];
  }
  __device__ __forceinline__ void to_floats(float (&out)[16]) const {
    load16(reinterpret_cast<const In*>(v), out);
  }
  // Bit 7 of byte k: element 4 * quad + k is not ±0 (the other bits are not meaningful). From
  // the stored bits: a magnitude plus all ones below the sign carries into the sign bit iff it
  // is not zero.
  __device__ __forceinline__ std::uint32_t nonzero_bytes(int quad) const {
    const std::uint32_t* w = reinterpret_cast<const std::uint32_t*>(v) + quad * 4 / kPerWord;
    if constexpr (sizeof(In) == 2) {  // two bf16 per word
      return bf16x4_nonzero_bytes(w[0], w[1]);
    } else {  // one f32 per word: flag in bit 31
      std::uint32_t f[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) f[k] = (w[k] & 0x7FFFFFFFu) + 0x7FFFFFFFu;
      return __byte_perm(__byte_perm(f[0], f[1], 0x0073), __byte_perm(f[2], f[3], 0x0073), 0x5410);
    }
  }
  // The magnitude bits of the largest |x| as a float (NaN above inf), from the stored bits.
  __device__ __forceinline__ std::uint32_t max_magnitude_bits() const {
    const std::uint32_t* w = reinterpret_cast<const std::uint32_t*>(v);
    std::uint32_t top = 0;
    if constexpr (sizeof(In) == 2) {  // both halves at once (one 3-input max per two words)
#pragma unroll
      for (int i = 0; i < 8; ++i) top = __vmaxu2(top, w[i] & 0x7FFF7FFFu);
      return max(top & 0xFFFFu, top >> 16) << 16;
    } else {
#pragma unroll
      for (int i = 0; i < 16; ++i) top = max(top, w[i] & 0x7FFFFFFFu);
      return top;
    }
  }
  static constexpr int kPerWord = 4 / static_cast<int>(sizeof(In));
};

// The smallest magnitude bits of y = x * scale that can saturate (fp8_saturates) or that are
// inf or NaN: e4m3 |y| > 464, e5m2 |y| >= 61440; NaN and inf bits lie above both.
template <Fp8Format F>
__device__ __forceinline__ constexpr std::uint32_t rare_magnitude_bits() {
  return F == Fp8Format::e4m3 ? 0x43E80001u /* just above 464 */ : 0x47700000u /* 61440 */;
}

// The cast of 16 raw input elements. The hardware path does per element only what every
// element needs (the unpacking, the multiply, the conversion); the checks and tallies come from
// words. In the model the casts run at the power-capped SM clock, where the per-element version
// was issue-bound (26 instructions per element; docs/performance.md, "Casts and amax").
// - A chunk whose max |y| could saturate, or holds inf or NaN, takes cast16_exact: saturation
//   is rare under current scaling, and only there can the conversion make a NaN code, which
//   cvt_pair_hw canonicalises.
// - Underflow (x != 0 and a code of magnitude 0, as quantize_cpu counts it) is a population
//   count over four codes at a time: "magnitude 0" and "x not ±0" as bit 7 of each byte; and
//   only for chunks with a code of magnitude 0 (few: the inputs are rarely 0 or tiny).
template <typename In, Fp8Format F, bool kHw>
__device__ __forceinline__ uint4 cast16(const Raw16<In>& raw, float scale, CastTally& t) {
  float v[16];
  raw.to_floats(v);
  if constexpr (!kHw) {
    return cast16_exact<F, false>(v, scale, t);
  } else {
    constexpr __nv_fp8_interpretation_t kind = F == Fp8Format::e4m3 ? __NV_E4M3 : __NV_E5M2;
    // max |y| is the largest |x| times the scale (rounding to nearest is monotone); a NaN or
    // non-finite scale makes it NaN or inf, so those chunks take the exact path too.
    const float top = bits_float(raw.max_magnitude_bits()) * scale;
    if ((float_bits(top) & 0x7FFFFFFFu) >= rare_magnitude_bits<F>())
      return cast16_exact<F, true>(v, scale, t);
    std::uint32_t w[4], code_nonzero[4];
#pragma unroll
    for (int quad = 0; quad < 4; ++quad) {
      const float* y = v + 4 * quad;
      const std::uint32_t lo = __nv_cvt_float2_to_fp8x2(make_float2(y[0] * scale, y[1] * scale),
                                                        __NV_SATFINITE, kind);
      const std::uint32_t hi = __nv_cvt_float2_to_fp8x2(make_float2(y[2] * scale, y[3] * scale),
                                                        __NV_SATFINITE, kind);
      w[quad] = __byte_perm(lo, hi, 0x5410);
      code_nonzero[quad] = code_nonzero_bytes(w[quad]);
    }
    // No code of magnitude 0 (the usual chunk): nothing underflowed. Otherwise count the codes of
    // magnitude 0 whose input was not ±0.
    const std::uint32_t all_nonzero =
        code_nonzero[0] & code_nonzero[1] & code_nonzero[2] & code_nonzero[3] & 0x80808080u;
    if (all_nonzero != 0x80808080u) {
      unsigned underflow = 0;
#pragma unroll
      for (int quad = 0; quad < 4; ++quad)
        underflow += underflows4(code_nonzero[quad], raw.nonzero_bytes(quad));
      t.underflow += underflow;
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
}

template <Fp8Format F, bool kHw>
__device__ __forceinline__ std::uint8_t cast1(float x, float scale, CastTally& t) {
  const float y = x * scale;
  const std::uint8_t code = static_cast<std::uint8_t>(cvt_pair<F, kHw>(y, 0.0f));
  tally<F>(t, x, y, code);
  return code;
}

// The scale a cast kernel multiplies by, and the side work of CastMetaWork done by the grid's
// first thread. No other thread reads the fields it writes, so no ordering is needed.
template <Fp8Format F>
__device__ __forceinline__ float cast_scale_and_meta_work(Fp8Meta* meta, const CastMetaWork& w) {
  const bool first = blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0;
  if (w.given != nullptr && w.given_deferred) {  // the producer left keys: finalise here
    const AmaxValues v = amax_values_from_bits(w.given->amax_bits_accum, F);
    if (first) {
      meta->inv_scale = v.inv_scale;
      meta->scale = v.scale;
      meta->amax = v.amax;
      meta->nonfinite = v.finite ? 0u : 1u;
      if (w.first_nonfinite != nullptr && !v.finite) atomicMin(w.first_nonfinite, w.nonfinite_id);
    }
    return v.scale;
  }
  const Fp8Meta* from = w.given != nullptr ? w.given : meta;
  if (first) {
    if (w.given != nullptr) {
      meta->inv_scale = from->inv_scale;
      meta->scale = from->scale;
      meta->amax = from->amax;
      meta->nonfinite = from->nonfinite;
    }
    if (w.first_nonfinite != nullptr && from->nonfinite != 0u)
      atomicMin(w.first_nonfinite, w.nonfinite_id);
  }
  return from->scale;
}

// Calls f.template operator()<F, kHw>() for the runtime format and conversion choice: the one
// place the cast kernels dispatch on them.
template <typename Fn>
void dispatch_cast(Fp8Format format, bool hw, Fn&& f) {
  if (format == Fp8Format::e4m3) {
    if (hw)
      f.template operator()<Fp8Format::e4m3, true>();
    else
      f.template operator()<Fp8Format::e4m3, false>();
  } else {
    if (hw)
      f.template operator()<Fp8Format::e5m2, true>();
    else
      f.template operator()<Fp8Format::e5m2, false>();
  }
}

inline bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

}  // namespace fp8lab::detail
