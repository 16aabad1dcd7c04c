// CPU tied LM head + cross-entropy, chunked over rows.
//
// Only `chunk_rows` rows of logits exist at a time (the [M, V] logits of gpt50m at B*T = 131072
// would be 26 GB). The gradient is produced in the same pass, so the logits are never recomputed.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu_backend/cpu_backend.hpp"
#include "cpu_backend/cpu_rows.hpp"
#include "nn/op_shapes.hpp"

namespace fp8lab::cpu {
namespace {

void check_loss_args(const TensorView& x, const TensorView& w, const TensorView& targets,
                     const TensorView& dx, const TensorView& dw_accum) {
  check_rank(x, 2, "loss x");
  check_rank(w, 2, "lm head weight");
  check_activation(x, "loss x");
  check_activation(w, "lm head weight");
  check_dtype(targets, DType::i32, "targets");
  FP8LAB_CHECK_KIND(ErrorKind::shape, w.shape[1] == x.shape[1] && targets.numel() == x.shape[0],
                    "cross_entropy: x {}, weight {}, targets {} do not fit [M, D], [V, D], [M]",
                    x.describe(), w.describe(), targets.describe());
  if (dx.data != nullptr) {
    check_activation(dx, "loss dx");
    nn::check_grad_dtype(dw_accum, "lm head dw");
    FP8LAB_CHECK_KIND(ErrorKind::shape, dx.numel() == x.numel() && dw_accum.numel() == w.numel(),
                      "cross_entropy: dx {} / dw {} do not match x {} / weight {}", dx.describe(),
                      dw_accum.describe(), x.describe(), w.describe());
  }
}

// Turns a row of logits into its loss; with `grad`, overwrites the row with dloss/dlogits.
double row_loss(float* logits, std::int64_t vocab, std::int32_t target, bool grad, float scale) {
  float mx = logits[0];
  for (std::int64_t j = 1; j < vocab; ++j) mx = std::max(mx, logits[j]);
  double sum = 0.0;
  for (std::int64_t j = 0; j < vocab; ++j) sum += std::exp(static_cast<double>(logits[j] - mx));
  const double lse = static_cast<double>(mx) + std::log(sum);
  const double loss = lse - logits[target];
  if (grad) {
    for (std::int64_t j = 0; j < vocab; ++j) {
      logits[j] = static_cast<float>(std::exp(static_cast<double>(logits[j]) - lse)) * scale;
    }
    logits[target] -= scale;
  }
  return loss;
}

}  // namespace

LossSums CpuBackend::cross_entropy(const TensorView& x, const TensorView& w,
                                   const TensorView& targets, int ignore_index, int chunk_rows,
                                   float grad_scale, const TensorView& dx,
                                   const TensorView& dw_accum, GradWrite dw_write) {
  check_loss_args(x, w, targets, dx, dw_accum);
  const bool grad = dx.data != nullptr;
  const std::int64_t rows = x.shape[0], d = x.shape[1], vocab = w.shape[0];
  const std::int64_t chunk = chunk_rows > 0 ? std::min<std::int64_t>(chunk_rows, rows) : rows;
  const std::int32_t* tgt = targets.as<const std::int32_t>();
  for (std::int64_t m = 0; m < rows; ++m) {
    FP8LAB_CHECK(tgt[m] == ignore_index || (tgt[m] >= 0 && tgt[m] < vocab),
                 "target {} at row {} is outside [0, {}) and is not ignore_index {}", tgt[m], m,
                 vocab, ignore_index);
  }
  Buffer w32 = allocate(MemoryKind::workspace, DType::f32, w.shape, "lm_head.w_f32");
  convert(w, w32);
  Buffer xc = allocate(MemoryKind::workspace, DType::f32, {chunk, d}, "loss.x_chunk");
  Buffer logits = allocate(MemoryKind::workspace, DType::f32, {chunk, vocab}, "loss.logits");
  Buffer dxc, dw32;
  if (grad) dxc = allocate(MemoryKind::workspace, DType::f32, {chunk, d}, "loss.dx_chunk");
  // A bf16 dW: the chunks' products are summed in an fp32 [V, D] workspace and added to the
  // stored value once, at the end (one rounding per micro-batch, not one per chunk: a rare
  // token's small share would otherwise vanish into a large running sum); an f32 dW takes them
  // through sgemm's beta.
  const bool dw_f32 = dw_accum.dtype == DType::f32;
  if (grad && !dw_f32) {
    dw32 = allocate(MemoryKind::workspace, DType::f32, w.shape, "loss.dw_f32");
    if (rows == 0) fill_zero(dw32);  // no chunk writes it
  }
  const float* wp = w32.view().as<const float>();
  LossSums sums;
  std::vector<double> losses(static_cast<std::size_t>(chunk));
  for (std::int64_t r0 = 0; r0 < rows; r0 += chunk) {
    const std::int64_t c = std::min(chunk, rows - r0);
    float* xp = xc.view().as<float>();
    float* lp = logits.view().as<float>();
    load_span(x, r0 * d, c * d, xp);
    sgemm_nt(static_cast<int>(c), static_cast<int>(vocab), static_cast<int>(d), 1.f, xp,
             static_cast<int>(d), wp, static_cast<int>(d), 0.f, lp, static_cast<int>(vocab));
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < c; ++i) {
      float* row = lp + i * vocab;
      const std::int32_t t = tgt[r0 + i];
      if (t == ignore_index) {
        losses[static_cast<std::size_t>(i)] = 0.0;
        if (grad) std::fill(row, row + vocab, 0.f);
      } else {
        losses[static_cast<std::size_t>(i)] = row_loss(row, vocab, t, grad, grad_scale);
      }
    }
    for (std::int64_t i = 0; i < c; ++i) {
      if (tgt[r0 + i] == ignore_index) continue;
      sums.loss_sum += losses[static_cast<std::size_t>(i)];
      ++sums.counted;
    }
    if (!grad) continue;
    float* dxp = dxc.view().as<float>();
    sgemm_nn(static_cast<int>(c), static_cast<int>(d), static_cast<int>(vocab), 1.f, lp,
             static_cast<int>(vocab), wp, static_cast<int>(d), 0.f, dxp, static_cast<int>(d));
    store_span(dx, r0 * d, c * d, dxp);
    // The first chunk writes: the f32 dW under GradWrite::overwrite, the bf16 dW's workspace.
    const bool first_write = r0 == 0 && (dw_write == GradWrite::overwrite || !dw_f32);
    sgemm_tn(static_cast<int>(vocab), static_cast<int>(d), static_cast<int>(c), 1.f, lp,
             static_cast<int>(vocab), xp, static_cast<int>(d), first_write ? 0.f : 1.f,
             dw_f32 ? dw_accum.as<float>() : dw32.view().as<float>(), static_cast<int>(d));
  }
  if (grad && !dw_f32) {
    const float* sum = dw32.view().as<const float>();
    if (dw_write == GradWrite::overwrite) {
      store_span(dw_accum, 0, vocab * d, sum);
    } else {
      accumulate_span(dw_accum, 0, vocab * d, sum);
    }
  }
  return sums;
}

}  // namespace fp8lab::cpu
