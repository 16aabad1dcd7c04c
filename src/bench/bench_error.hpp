// Accuracy of a GPU FP8 GEMM against float64, on sampled output rows.
#pragma once

#include <cstdint>
#include <vector>

#include "fp8lab/fp8_format.hpp"
#include "fp8lab/tensor.hpp"

namespace fp8lab::bench {

// out[r, j] should be sum_k dec(a[r, k]) * dec(b[j, k]) * inv_a * inv_b (a [R, K], b [J, K]
// fp8 codes, out [R, J] bf16 or f32, all on the device). Computes that in float64 for the rows
// `rows` and returns ||out - ref|| / ||ref|| over them. Downloads b whole and a, out by row.
double sampled_fp8_gemm_error(const TensorView& a, float inv_a, const TensorView& b, float inv_b,
                              const TensorView& out, const std::vector<std::int64_t>& rows);

// `count` distinct row indices spread over [0, n), offset by a seed.
std::vector<std::int64_t> sample_rows(std::int64_t n, int count, std::uint64_t seed);

}  // namespace fp8lab::bench
