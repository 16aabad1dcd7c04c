// CPU embedding (token + learned position) forward and backward.
#include "cpu_backend/cpu_backend.hpp"
#include "cpu_backend/cpu_rows.hpp"
#include "nn/op_shapes.hpp"

#include <algorithm>
#include <vector>

namespace fp8lab::cpu {
namespace {

// The shared shape checks, plus the CPU's: activations f32 or bf16 in host memory.
void check_embedding_args(const TensorView& tokens, const TensorView& wte, const TensorView& wpe,
                          const TensorView& acts, const char* acts_name) {
  nn::check_embedding_shapes(tokens, wte, wpe, acts, acts_name);
  check_activation(acts, acts_name);
}

}  // namespace

void CpuBackend::embedding_forward(const TensorView& tokens, const TensorView& wte,
                                   const TensorView& wpe, const TensorView& out) {
  check_embedding_args(tokens, wte, wpe, out, "out");
  check_dtype(wte, DType::f32, "wte");
  check_dtype(wpe, DType::f32, "wpe");
  const std::int64_t m_rows = tokens.numel(), d = wte.shape[1], vocab = wte.shape[0];
  const std::int64_t seq = wpe.shape[0];
  const std::int32_t* ids = tokens.as<const std::int32_t>();
  for (std::int64_t m = 0; m < m_rows; ++m) {
    FP8LAB_CHECK(ids[m] >= 0 && ids[m] < vocab, "token id {} at position {} is outside [0, {})",
                 ids[m], m, vocab);
  }
#pragma omp parallel
  {
    std::vector<float> row(static_cast<std::size_t>(d));
#pragma omp for schedule(static)
    for (std::int64_t m = 0; m < m_rows; ++m) {
      const float* te = wte.as<const float>() + ids[m] * d;
      const float* pe = wpe.as<const float>() + (m % seq) * d;
      for (std::int64_t j = 0; j < d; ++j) row[static_cast<std::size_t>(j)] = te[j] + pe[j];
      store_span(out, m * d, d, row.data());
    }
  }
}

void CpuBackend::embedding_backward(const TensorView& tokens, const TensorView& dout,
                                    const TensorView& dwte_accum, const TensorView& dwpe_accum) {
  check_embedding_args(tokens, dwte_accum, dwpe_accum, dout, "dout");
  check_dtype(dwte_accum, DType::f32, "dwte");
  check_dtype(dwpe_accum, DType::f32, "dwpe");
  const std::int64_t m_rows = tokens.numel(), d = dwte_accum.shape[1];
  const std::int64_t seq = dwpe_accum.shape[0];
  const std::int32_t* ids = tokens.as<const std::int32_t>();
  float* dwte = dwte_accum.as<float>();
  float* dwpe = dwpe_accum.as<float>();
  // Rows with the same token hit the same dwte row: split the work by columns instead, each
  // thread walking all rows in order, so the sums are race-free and thread-count independent.
  constexpr std::int64_t kCols = 16;
  const std::int64_t col_blocks = (d + kCols - 1) / kCols;
#pragma omp parallel for schedule(static)
  for (std::int64_t cb = 0; cb < col_blocks; ++cb) {
    const std::int64_t c0 = cb * kCols, c1 = std::min(d, c0 + kCols);
    for (std::int64_t m = 0; m < m_rows; ++m) {
      float* te = dwte + ids[m] * d;
      float* pe = dwpe + (m % seq) * d;
      for (std::int64_t j = c0; j < c1; ++j) {
        const float g = load_at(dout, m * d + j);
        te[j] += g;
        pe[j] += g;
      }
    }
  }
}

}  // namespace fp8lab::cpu
