// Counter-based random numbers: Philox4x32-10 (Salmon et al., SC'11).
//
// The output depends only on (seed, stream, index): no state, no order dependence, so any thread
// on any backend can produce element `index` of stream `stream` directly. Parameter `p` of a model
// uses stream = hash(p's name), so adding a parameter never shifts the others' values.
//
// Integer outputs are bit-identical on host and device. Float conversions below use only exact
// integer->float steps and one multiply, also identical. normal() uses log/cos and is therefore
// host-only: initialisation runs on the host and is uploaded, so every backend starts
// from byte-identical weights.
#pragma once

#include "fp8lab/hostdevice.hpp"

#include <cstdint>
#include <string_view>

namespace fp8lab {

struct Philox4 {
  std::uint32_t v[4];
};

FP8LAB_HD std::uint32_t philox_mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t* hi) {
  std::uint64_t p = static_cast<std::uint64_t>(a) * b;
  *hi = static_cast<std::uint32_t>(p >> 32);
  return static_cast<std::uint32_t>(p);
}

// Philox4x32 with 10 rounds; constants from the Random123 reference.
FP8LAB_HD Philox4 philox4x32_10(Philox4 ctr, std::uint32_t key0, std::uint32_t key1) {
  constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    std::uint32_t hi0, hi1;
    std::uint32_t lo0 = philox_mulhilo(kM0, ctr.v[0], &hi0);
    std::uint32_t lo1 = philox_mulhilo(kM1, ctr.v[2], &hi1);
    ctr = Philox4{{hi1 ^ ctr.v[1] ^ key0, lo1, hi0 ^ ctr.v[3] ^ key1, lo0}};
    key0 += kW0;
    key1 += kW1;
  }
  return ctr;
}

// Four independent 32-bit words for (seed, stream, index).
FP8LAB_HD Philox4 philox_block(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  Philox4 ctr{{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32),
               static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32)}};
  return philox4x32_10(ctr, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

FP8LAB_HD std::uint32_t random_u32(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return philox_block(seed, stream, index).v[0];
}

// Uniform in the open interval (0, 1): 24 random bits, centred in their bucket (exact in fp32).
FP8LAB_HD float u32_to_unit_open(std::uint32_t x) {
  return (static_cast<float>(x >> 8) + 0.5f) * (1.0f / 16777216.0f);
}

FP8LAB_HD float random_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return u32_to_unit_open(random_u32(seed, stream, index));
}

// Standard normal via Box-Muller in double, rounded once to float. Host only (see header note).
float random_normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t index);

// Fills out[i] = mean + stddev * random_normal(seed, stream, i) for i in [0, n); OpenMP-parallel.
void fill_normal(float* out, std::int64_t n, std::uint64_t seed, std::uint64_t stream, float mean,
                 float stddev);
void fill_uniform(float* out, std::int64_t n, std::uint64_t seed, std::uint64_t stream, float lo,
                  float hi);

// A stable 64-bit stream id for a name (FNV-1a): "blocks.3.mlp.fc.weight" -> stream.
std::uint64_t stream_id(std::string_view name);

}  // namespace fp8lab
