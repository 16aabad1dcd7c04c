// The linear layer y = x Wᵀ with its backward, in the two precision policies of design.md §2.
//
//   x  [M, K] bf16    (activations; M = tokens)
//   W  [N, K] bf16    (the working copy the model casts from its fp32 master weights)
//   y  [M, N] bf16
//   dY [M, N] bf16 -> dX [M, K] bf16, dW [N, K] f32
//
// bf16: GEMMs on the bf16 operands with fp32 accumulation, y and dX rounded to bf16.
// fp8:  forward casts x and W to E4M3 with their current scales (quantize-transpose: both
//       layouts in one pass) into `LinearSaved`; y = (Xq Wqᵀ)·inv_sx·inv_sw. Backward casts dY to
//       E5M2 with its own current scale, dX = dYq·Wq (K-major operand: Wqᵀ), dW = dYqᵀ·Xq
//       (operands dYqᵀ and Xqᵀ). Backward never re-casts x or W and never recomputes their amax:
//       it reads only what the forward saved. Scales are constants for differentiation.
//
// Scaling recipes (fp8lab/fp8_recipe.hpp): the above is the tensorwise recipe. Under rowwise and
// blockwise every cast has one scale per group; x, W (forward) and dY (backward) are each cast
// into both layouts with the groups their GEMMs need, each layout with its inverse scales
// (*_inv, in the layout of fp8lab/fp8_scale_layout.hpp). With bf16_wgrad the wgrad is a BF16
// GEMM of dY and the forward's BF16 x (kept in `x`), and no transposed x or dY is cast.
//
// Memory: every tensor here is a caller-owned view, so the CUDA twin (linear_*_cuda, same
// arguments) can take arena memory. On the CPU, `LinearSavedHost` owns the saved buffers.
// A non-finite x, W or dY is an ErrorKind::non_finite error naming "<name>.x", "<name>.w" or
// "<name>.dy" (fp8 policy: found by the amax; bf16 policy: checked explicitly, so both policies
// treat bad input alike).
#pragma once

#include "fp8lab/fp8_grouped.hpp"
#include "fp8lab/fp8_recipe.hpp"
#include "fp8lab/fp8_scaling.hpp"
#include "fp8lab/tensor.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fp8lab {

enum class LinearPrecision : std::uint8_t { bf16, fp8 };

const char* linear_precision_name(LinearPrecision p);           // "bf16", "fp8"
LinearPrecision parse_linear_precision(std::string_view name);  // throws naming the bad string

struct LinearConfig {
  LinearPrecision precision = LinearPrecision::bf16;
  std::string name = "linear";  // prefixes tensor names in errors: "<name>.x", "<name>.w", ...
  Fp8Options fp8{};             // fp8 policy: the scaling recipe, BF16 wgrad
};

// The checks of an FP8 linear [M, K] x [N, K] under a recipe: every dimension a multiple of
// fp8_recipe_alignment (an ErrorKind::shape error naming the dimension and the multiple).
void check_fp8_linear_dims(const Fp8Options& fp8, std::int64_t m, std::int64_t k, std::int64_t n,
                           const std::string& name);

// What forward leaves for backward. bf16 policy: x and w are the caller's inputs (keep them alive
// until backward). fp8 policy: the forward-rounded E4M3 casts in both layouts, with their scales.
struct LinearSaved {
  LinearPrecision precision = LinearPrecision::bf16;
  Fp8Options fp8{};
  TensorView x, w;                // bf16 [M, K], [N, K] (bf16 policy; x also under bf16_wgrad)
  TensorView xq, xq_t;            // e4m3 [M, K] and its transpose [K, M] (fp8 policy)
  TensorView wq, wq_t;            // e4m3 [N, K] and its transpose [K, N] (fp8 policy)
  // Grouped recipes: the f32 inverse scales of each layout (empty for tensorwise).
  TensorView xq_inv, xq_t_inv, wq_inv, wq_t_inv;
  Fp8Scale x_scale, w_scale;      // fp8 policy (grouped recipes: amax only)
  CastCounts x_counts, w_counts;  // fp8 policy: what the forward casts clamped or flushed
};

// Host memory for LinearSaved's fp8 buffers (empty for the bf16 policy).
struct LinearSavedHost {
  HostTensor xq, xq_t, wq, wq_t, xq_inv, xq_t_inv, wq_inv, wq_t_inv;
  LinearSaved saved;  // views into the tensors above
  LinearSavedHost(LinearPrecision precision, std::int64_t m, std::int64_t k, std::int64_t n,
                  const Fp8Options& fp8 = {});
  LinearSavedHost(const LinearSavedHost&) = delete;
  LinearSavedHost& operator=(const LinearSavedHost&) = delete;
};

// What backward's cast did (fp8 policy; zeros for bf16).
struct LinearBackwardStats {
  Fp8Scale dy_scale;
  CastCounts dy_counts;
};

// Scratch the fp8 backward casts dY into: dYq [M, N] and dYqᵀ [N, M], e5m2 (unused for bf16).
struct LinearScratch {
  TensorView dyq, dyq_t;
  TensorView dyq_inv, dyq_t_inv;  // grouped recipes: their f32 inverse scales
  // CUDA only, where linear_wgrad_stages_f32 (fp8lab/linear_cuda.hpp) says so: the f32 [N, K]
  // weight-gradient product, added into a bf16 dW in one rounding.
  TensorView dw_f32;
};

struct LinearScratchHost {
  HostTensor dyq, dyq_t, dyq_inv, dyq_t_inv;
  LinearScratch scratch;  // views into the tensors above
  LinearScratchHost(LinearPrecision precision, std::int64_t m, std::int64_t n,
                    const Fp8Options& fp8 = {});
  LinearScratchHost(const LinearScratchHost&) = delete;
  LinearScratchHost& operator=(const LinearScratchHost&) = delete;
};

// y = x Wᵀ. Fills `saved` (its fp8 views must have been sized by the caller, e.g. LinearSavedHost).
// x_amax (fp8 policy): amax_cpu(x) when the caller already has it (a producer-fused amax); the
// layer then skips its own pass over x. Same for w_amax (W's, from the optimizer update) and
// for dy_amax in the backward.
void linear_forward_cpu(const LinearConfig& config, const TensorView& x, const TensorView& w,
                        const TensorView& y, LinearSaved& saved,
                        std::optional<float> x_amax = std::nullopt,
                        std::optional<float> w_amax = std::nullopt);

// dX = dY W and dW = dYᵀ x, from what forward saved. dX is bf16; dW is f32 or bf16. With
// accumulate_dw, dW += dYᵀ x for gradient accumulation (a bf16 dW rounds the fp32 sum once);
// otherwise dW is overwritten.
LinearBackwardStats linear_backward_cpu(const LinearConfig& config, const LinearSaved& saved,
                                        const TensorView& dy, const TensorView& dx,
                                        const TensorView& dw, const LinearScratch& scratch,
                                        bool accumulate_dw = false,
                                        std::optional<float> dy_amax = std::nullopt);

}  // namespace fp8lab
