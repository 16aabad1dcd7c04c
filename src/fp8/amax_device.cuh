// The device side of tensorwise current amax (design §2), shared by amax_scale_cuda and by the
// ops that produce an FP8 linear's input and reduce its amax while storing it (the producer-fused
// amax, AmaxSlot in fp8lab/backend.hpp). One protocol, so both give the same Fp8Meta bytes:
//
//   key(v) = the IEEE bits of |v| as an unsigned integer. Integer order on keys is float order
//            on finite values and inf, and puts every NaN above inf; integer max is associative
//            and commutative, so no block order can change the result (deterministic).
//   Each block reduces its keys and atomicMax-es them into meta->amax_bits_accum; the last block
//   to take a ticket (meta->blocks_done) turns the bits into amax / scale / inv_scale and the
//   non-finite flag, zeroes the cast counters and both scratch words: the meta is ready for the
//   next amax without a memset. Deferred (accumulate_block_amax): the blocks only atomicMax,
//   and the reader turns the bits into the same values (amax_values_from_bits).
//
// Keys are taken from the values as STORED: a bf16 output's key comes from its 16 bits, so the
// producer's amax equals the amax a later pass over the tensor would read, bit for bit.
#pragma once

#include <cstdint>

#include "fp8lab/fp8_format.hpp"
#include "fp8lab/fp8_meta.hpp"

namespace fp8lab::detail {

__device__ __forceinline__ std::uint32_t amax_key(float v) { return float_bits(v) & 0x7FFFFFFFu; }

// A bf16 value is the upper half of its fp32 value, so its key is its magnitude bits shifted up.
__device__ __forceinline__ std::uint32_t amax_key_bf16(std::uint16_t bits) {
  return (static_cast<std::uint32_t>(bits) & 0x7FFFu) << 16;
}

// The largest key among the 2N bf16 values packed in N words: the magnitudes compare as
// unsigned 16-bit lanes exactly as their keys do, so one lane-wise max per word (max.u16x2 on
// sm_90) and a last max of the two lanes.
template <int N>
__device__ __forceinline__ std::uint32_t amax_key_bf16_words(const std::uint32_t (&w)[N]) {
  std::uint32_t m = w[0] & 0x7FFF7FFFu;
#pragma unroll
  for (int i = 1; i < N; ++i) m = __vmaxu2(m, w[i] & 0x7FFF7FFFu);
  return max(m << 16, m & 0xFFFF0000u);
}

// The one exact copy of scale_from_amax (fp8_scaling.hpp) the kernels can see: that header
// pulls in fmt, which nvcc cannot compile. The tests hold the two to the same bits.
__device__ __forceinline__ void scale_from_amax_device(float amax, Fp8Format format, float& scale,
                                                       float& inv_scale) {
  constexpr float kMaxFiniteFloat = 3.40282346638528859812e+38f;
  scale = amax == 0.0f ? 1.0f : fp8_spec(format).max_value / amax;
  if (scale > kMaxFiniteFloat) scale = kMaxFiniteFloat;  // tiny amax: fmax / amax overflowed
  inv_scale = 1.0f / scale;
}

// What the reduced bits mean: amax (NaN above inf), the scale and its inverse for `format`,
// and whether the amax was finite (non-finite: scale 1, the step finishes, the flag reports it).
struct AmaxValues {
  float amax, scale, inv_scale;
  bool finite;
};
__device__ __forceinline__ AmaxValues amax_values_from_bits(std::uint32_t bits, Fp8Format format) {
  AmaxValues v;
  v.finite = bits < 0x7F800000u;
  v.amax = bits > 0x7F800000u ? __int_as_float(0x7FC00000) : bits_float(bits);
  v.scale = 1.0f;
  v.inv_scale = 1.0f;
  if (v.finite) scale_from_amax_device(v.amax, format, v.scale, v.inv_scale);
  return v;
}

// The last block's step: the reduced bits -> amax, scale, inv_scale, flags; scratch reset.
__device__ __forceinline__ void finalize_amax(Fp8Meta* meta, Fp8Format format) {
  const std::uint32_t bits = atomicExch(&meta->amax_bits_accum, 0u);
  meta->blocks_done = 0;
  const AmaxValues v = amax_values_from_bits(bits, format);
  meta->amax = v.amax;
  meta->scale = v.scale;
  meta->inv_scale = v.inv_scale;
  meta->nonfinite = v.finite ? 0u : 1u;
  meta->saturated = 0;
  meta->underflow = 0;
}

// The CTA's largest key in thread 0 (every thread of the 1-D block calls this; contains
// __syncthreads). Other threads get their own warp's maximum.
__device__ __forceinline__ std::uint32_t block_max_key(std::uint32_t key) {
  __shared__ std::uint32_t warp_max[32];
  key = __reduce_max_sync(0xFFFFFFFFu, key);
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = key;
  __syncthreads();
  if (threadIdx.x != 0) return key;
  std::uint32_t b = 0;
  for (unsigned w = 0; w < blockDim.x / 32; ++w) b = max(b, warp_max[w]);
  return b;
}

// Every thread of every committing block calls this once, with the largest key of the values
// it handled (0 for none), after its last store: a 1-D block whose size is a multiple of 32
// (at most 1024). Contains __syncthreads: no thread of the block may have returned early.
// `blocks` is how many blocks commit in all; they may belong to several launches that write one
// tensor together (the attention backward's dK/dV and dQ kernels): the tickets count across
// them, so the last block of the last launch finalises, once. Nothing else may use the meta
// until then.
__device__ __forceinline__ void commit_block_amax(std::uint32_t key, Fp8Meta* meta,
                                                  Fp8Format format, unsigned blocks) {
  const std::uint32_t b = block_max_key(key);
  if (threadIdx.x != 0) return;
  if (b) atomicMax(&meta->amax_bits_accum, b);
  __threadfence();  // this block's max is visible before its ticket
  if (atomicAdd(&meta->blocks_done, 1u) != blocks - 1) return;
  __threadfence();  // and the last block sees every block's max
  finalize_amax(meta, format);
}

// The deferred protocol (AmaxSlot::deferred in fp8lab/backend.hpp): the block's largest key
// goes into meta->amax_bits_accum and nothing is finalised; the reader of the slot (a cast,
// CastMetaWork::given_deferred) turns the bits into the scale, and the slot's owner zeroes the
// word before the next producer. No fence and no ticket: the atomicMax needs no answer, so the
// CTA retires at once. The ticket's round trip after a fence costs ~0.8 us per CTA where one
// CTA fills an SM (the attention kernels, add_rmsnorm at d 2048; bench/probes/
// amax_commit_probe.cu), all of it time the SM runs nothing else.
__device__ __forceinline__ void accumulate_block_amax(std::uint32_t key, Fp8Meta* meta) {
  const std::uint32_t b = block_max_key(key);
  if (threadIdx.x == 0 && b) atomicMax(&meta->amax_bits_accum, b);
}

// The deferred protocol per warp, for kernels whose CTA has no cheap common point at its end
// (the warp-specialised attention kernels: there a CTA-wide round makes the consumers wait for
// the producer warpgroup, and producer_amax_probe measured the deferred slot at +3.5% of the
// hd-128 forward with that round). Each warp hands in its own largest key; a zero key (a warp
// that stored nothing, or only zeros) sends nothing. Every lane of the warp must call it.
__device__ __forceinline__ void accumulate_warp_amax(std::uint32_t key, Fp8Meta* meta) {
  key = __reduce_max_sync(0xFFFFFFFFu, key);
  if ((threadIdx.x & 31) == 0 && key) atomicMax(&meta->amax_bits_accum, key);
}

// A producer's end: the deferred protocol or the ticket's, as its slot asks (AmaxSlot::deferred).
__device__ __forceinline__ void hand_in_block_amax(std::uint32_t key, Fp8Meta* meta,
                                                   Fp8Format format, unsigned blocks,
                                                   bool deferred) {
  if (deferred)
    accumulate_block_amax(key, meta);
  else
    commit_block_amax(key, meta, format, blocks);
}

// The usual case: every block of this launch's grid commits, and no other launch.
__device__ __forceinline__ void commit_block_amax(std::uint32_t key, Fp8Meta* meta,
                                                  Fp8Format format) {
  commit_block_amax(key, meta, format, gridDim.x * gridDim.y * gridDim.z);
}

}  // namespace fp8lab::detail
