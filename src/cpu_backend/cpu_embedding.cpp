// CPU embedding (token + learned position) forward and backward.
#include "cpu_backend/cpu_backend.hpp"
#include "cpu_backend/cpu_rows.hpp"
#include "nn/op_shapes.hpp"

#include <algorithm>
#include <vector>

namespace fp8lab::cpu {
namespace {

// The shared shape checks, plus the CPU's: activations f32 or bf16 in host memory, every token
// id a row of the table.
void check_embedding_args(const TensorView& tokens, const TensorView& wte, const TensorView& wpe,
                          const TensorView& acts, const char* acts_name, bool gradients = false) {
  const nn::EmbeddingShape e =
      nn::check_embedding_shapes(tokens, wte, wpe, acts, acts_name, gradients);
  check_activation(acts, acts_name);
  const std::int32_t* ids = tokens.as<const std::int32_t>();
  for (std::int64_t m = 0; m < e.rows; ++m) {
    FP8LAB_CHECK(ids[m] >= 0 && ids[m] < e.vocab, "token id {} at position {} is outside [0, {})",
                 ids[m], m, e.vocab);
  }
}

// dwte[token of row m] += dout[m] and dwpe[m % seq] += dout[m] for every row, in fp32. Rows with
// the same token hit the same dwte row: the work splits by columns instead, each thread walking
// all rows in order, so the sums are race-free and thread-count independent. te_row(m): the
// dwte row of row m's token.
template <typename TeRow>
void add_embedding_rows(const std::int32_t* ids, std::int64_t m_rows, std::int64_t seq,
                        std::int64_t d, const TensorView& dout, float* dwpe, TeRow te_row) {
  constexpr std::int64_t kCols = 16;
  const std::int64_t col_blocks = (d + kCols - 1) / kCols;
#pragma omp parallel for schedule(static)
  for (std::int64_t cb = 0; cb < col_blocks; ++cb) {
    const std::int64_t c0 = cb * kCols, c1 = std::min(d, c0 + kCols);
    for (std::int64_t m = 0; m < m_rows; ++m) {
      float* te = te_row(m);
      float* pe = dwpe + (m % seq) * d;
      for (std::int64_t j = c0; j < c1; ++j) {
        const float g = load_at(dout, m * d + j);
        te[j] += g;
        pe[j] += g;
      }
    }
  }
}

}  // namespace

void CpuBackend::embedding_forward(const TensorView& tokens, const TensorView& wte,
                                   const TensorView& wpe, const TensorView& out) {
  check_embedding_args(tokens, wte, wpe, out, "out");  // wte and wpe f32
  const std::int64_t m_rows = tokens.numel(), d = wte.shape[1];
  const std::int64_t seq = wpe.shape[0];
  const std::int32_t* ids = tokens.as<const std::int32_t>();
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
  check_embedding_args(tokens, dwte_accum, dwpe_accum, dout, "dout", /*gradients=*/true);
  const std::int64_t m_rows = tokens.numel(), d = dwte_accum.shape[1];
  const std::int64_t seq = dwpe_accum.shape[0], vocab = dwte_accum.shape[0];
  const std::int32_t* ids = tokens.as<const std::int32_t>();
  if (dwte_accum.dtype == DType::f32) {
    float* dwte = dwte_accum.as<float>();
    add_embedding_rows(ids, m_rows, seq, d, dout, dwpe_accum.as<float>(),
                       [&](std::int64_t m) { return dwte + ids[m] * d; });
    return;
  }
  // bf16 gradients: each element summed in fp32 from its stored value over the rows in order,
  // then rounded once (the CUDA kernels' arithmetic), in fp32 copies of dwpe and of the dwte
  // rows the tokens touch.
  std::vector<std::int64_t> slot(static_cast<std::size_t>(vocab), -1);
  std::vector<std::int32_t> touched;
  for (std::int64_t m = 0; m < m_rows; ++m) {
    std::int64_t& s = slot[static_cast<std::size_t>(ids[m])];
    if (s < 0) {
      s = static_cast<std::int64_t>(touched.size());
      touched.push_back(ids[m]);
    }
  }
  const auto n_touched = static_cast<std::int64_t>(touched.size());
  std::vector<float> te(static_cast<std::size_t>(n_touched * d));
  std::vector<float> pe(static_cast<std::size_t>(seq * d));
  for (std::int64_t t = 0; t < n_touched; ++t) load_span(dwte_accum, touched[t] * d, d, &te[t * d]);
  load_span(dwpe_accum, 0, seq * d, pe.data());
  add_embedding_rows(ids, m_rows, seq, d, dout, pe.data(), [&](std::int64_t m) {
    return te.data() + slot[static_cast<std::size_t>(ids[m])] * d;
  });
  for (std::int64_t t = 0; t < n_touched; ++t)
    store_span(dwte_accum, touched[t] * d, d, &te[t * d]);
  store_span(dwpe_accum, 0, seq * d, pe.data());
}

}  // namespace fp8lab::cpu
