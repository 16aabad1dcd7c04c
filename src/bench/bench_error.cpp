// Sampled float64 reference for the GPU FP8 GEMMs (see bench_error.hpp).
#if defined(FP8LAB_HAVE_CUDA)
#include "bench/bench_error.hpp"

#include <array>
#include <cmath>

#include "core/cuda_check.hpp"
#include "core/cuda_memory.hpp"

namespace fp8lab::bench {
namespace {

std::array<double, 256> decode_table(DType t) {
  const Fp8Format f = t == DType::e4m3 ? Fp8Format::e4m3 : Fp8Format::e5m2;
  std::array<double, 256> lut{};
  for (int c = 0; c < 256; ++c)
    lut[static_cast<std::size_t>(c)] = fp8_to_float(static_cast<std::uint8_t>(c), f);
  return lut;
}

std::vector<std::uint8_t> download_row(const TensorView& t, std::int64_t row) {
  const std::size_t bytes = static_cast<std::size_t>(t.shape[1]) * dtype_size(t.dtype);
  std::vector<std::uint8_t> out(bytes);
  FP8LAB_CUDA_CHECK(cudaMemcpy(out.data(), t.as<const std::uint8_t>() + row * bytes, bytes,
                               cudaMemcpyDeviceToHost));
  return out;
}

double out_value(const std::vector<std::uint8_t>& row, DType dtype, std::int64_t j) {
  if (dtype == DType::f32) return reinterpret_cast<const float*>(row.data())[j];
  return bf16_to_float(reinterpret_cast<const std::uint16_t*>(row.data())[j]);
}

}  // namespace

std::vector<std::int64_t> sample_rows(std::int64_t n, int count, std::uint64_t seed) {
  std::vector<std::int64_t> rows;
  const std::int64_t step = std::max<std::int64_t>(1, n / count);
  for (int i = 0; i < count && i * step < n; ++i)
    rows.push_back((i * step + static_cast<std::int64_t>(seed % static_cast<std::uint64_t>(step))) %
                   n);
  return rows;
}

double sampled_fp8_gemm_error(const TensorView& a, float inv_a, const TensorView& b, float inv_b,
                              const TensorView& out, const std::vector<std::int64_t>& rows) {
  FP8LAB_CHECK(is_fp8(a.dtype) && is_fp8(b.dtype) && a.shape[1] == b.shape[1] &&
                   out.shape == (Shape{a.shape[0], b.shape[0]}),
               "sampled_fp8_gemm_error: a {} b {} out {}", a.describe(), b.describe(),
               out.describe());
  const std::int64_t k = a.shape[1], cols = b.shape[0];
  const HostTensor b_host = to_host(b);
  const auto lut_a = decode_table(a.dtype), lut_b = decode_table(b.dtype);
  const double scale = static_cast<double>(inv_a) * static_cast<double>(inv_b);
  double diff2 = 0, ref2 = 0;
  for (std::int64_t r : rows) {
    const std::vector<std::uint8_t> a_row = download_row(a, r), out_row = download_row(out, r);
    const std::uint8_t* bq = b_host.as<const std::uint8_t>();
#pragma omp parallel for schedule(static) reduction(+ : diff2, ref2)
    for (std::int64_t j = 0; j < cols; ++j) {
      double acc = 0;
      for (std::int64_t p = 0; p < k; ++p)
        acc += lut_a[a_row[static_cast<std::size_t>(p)]] * lut_b[bq[j * k + p]];
      const double ref = acc * scale;
      const double d = out_value(out_row, out.dtype, j) - ref;
      diff2 += d * d;
      ref2 += ref * ref;
    }
  }
  return std::sqrt(diff2 / ref2);
}

}  // namespace fp8lab::bench
#endif  // FP8LAB_HAVE_CUDA
