#include "fp8lab/rng.hpp"

#include <cmath>

namespace fp8lab {

float random_normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  Philox4 r = philox_block(seed, stream, index);
  // 53-bit uniforms in (0, 1) from two words each, so log() never sees zero.
  auto unit53 = [](std::uint32_t a, std::uint32_t b) {
    std::uint64_t bits = (static_cast<std::uint64_t>(a) << 21) ^ (b >> 11);
    bits &= (std::uint64_t{1} << 53) - 1;
    return (static_cast<double>(bits) + 0.5) / 9007199254740992.0;
  };
  double u1 = unit53(r.v[0], r.v[1]);
  double u2 = unit53(r.v[2], r.v[3]);
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2));
}

void fill_normal(float* out, std::int64_t n, std::uint64_t seed, std::uint64_t stream, float mean,
                 float stddev) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    out[i] = mean + stddev * random_normal(seed, stream, static_cast<std::uint64_t>(i));
  }
}

void fill_uniform(float* out, std::int64_t n, std::uint64_t seed, std::uint64_t stream, float lo,
                  float hi) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    out[i] = lo + (hi - lo) * random_uniform(seed, stream, static_cast<std::uint64_t>(i));
  }
}

std::uint64_t stream_id(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace fp8lab
