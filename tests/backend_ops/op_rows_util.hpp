// Helpers the registry's rows share (op_rows_*.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backend_ops/op_registry.hpp"
#include "common/test_data.hpp"
#include "fp8lab/fp8_meta.hpp"
#include "fp8lab/rng.hpp"

namespace fp8lab::testing {

// The bounds most rows use against the CPU reference. Elementwise ops that round once in the
// same order are exact. A bf16 output computed in another order may land on the other side of
// a rounding boundary (one bf16 ulp, <= 2^-8 relative) in a fraction of its elements; f32
// results of sums in another order differ in the last bits.
inline Bound bf16_rounding() { return Bound::relative(4e-3); }
inline Bound f32_reordered() { return Bound::relative(1e-5); }

inline HostTensor normal(DType dtype, const Shape& shape, std::uint64_t seed, std::uint64_t stream,
                         float stddev = 1.0f) {
  return random_normal(dtype, shape, seed, stream, stddev);
}

// `count` token ids in [0, vocab) from Philox (seed, stream).
inline HostTensor token_ids(std::int64_t count, std::int64_t vocab, std::uint64_t seed,
                            std::uint64_t stream) {
  HostTensor t(DType::i32, {count});
  std::vector<float> u(static_cast<std::size_t>(count));
  fill_uniform(u.data(), count, seed, stream, 0.0f, 1.0f);
  for (std::int64_t i = 0; i < count; ++i)
    t.as<std::int32_t>()[i] = std::min<std::int32_t>(
        static_cast<std::int32_t>(u[static_cast<std::size_t>(i)] * static_cast<float>(vocab)),
        static_cast<std::int32_t>(vocab - 1));
  return t;
}

// The part of an amax slot both backends fill the same way (inv_scale, scale, amax and the
// non-finite flag); the rest is the CUDA reduction's scratch.
inline HostTensor meta_head(OpSession& s, const Buffer& slots, int index) {
  const HostTensor all = s.get(slots.view());
  HostTensor head(DType::u8, {16});
  std::memcpy(head.view().data,
              static_cast<const unsigned char*>(all.view().data) + index * sizeof(Fp8Meta), 16);
  return head;
}

// 1 when the slot's amax is max|stored value| of `stored` (what the backend itself wrote), else
// 0: the producer-fused amax must describe the producer's own output, whose bf16 roundings may
// differ between backends.
inline HostTensor amax_describes(OpSession& s, const Buffer& slots, int index,
                                 const HostTensor& stored) {
  const HostTensor head = meta_head(s, slots, index);
  float amax = 0;
  std::memcpy(&amax, static_cast<const unsigned char*>(head.view().data) + offsetof(Fp8Meta, amax),
              4);
  double max_abs = 0;
  for (std::int64_t i = 0; i < stored.numel(); ++i)
    max_abs = std::max(max_abs, std::abs(element_as_double(stored.view(), i)));
  HostTensor agrees(DType::u8, {1});
  agrees.as<std::uint8_t>()[0] = static_cast<double>(amax) == max_abs ? 1 : 0;
  return agrees;
}

// A scalar result as a one-element tensor.
inline HostTensor scalar_f64(double v) {
  HostTensor t(DType::f64, {1});
  t.as<double>()[0] = v;
  return t;
}
inline HostTensor scalar_i64(std::int64_t v) {
  HostTensor t(DType::u8, {8});
  std::memcpy(t.view().data, &v, 8);
  return t;
}

}  // namespace fp8lab::testing
