// The CUDA twin of the CPU reference linear layer (fp8lab/linear.hpp): y = x Wᵀ and its backward.
//
//   x [M, K] bf16, W [N, K] bf16, y [M, N] bf16; dY [M, N] bf16 -> dX [M, K] bf16, dW [N, K] f32
//
// Modes: bf16 (cuBLASLt BF16, fp32 accumulation; the CPU bf16 policy), and the CPU fp8 policy in
// two implementations that must give the same bytes: fp8-plain (separate amax, cast and transpose
// kernels) and fp8-fused (amax, then one cast-transpose pass per tensor). Scales never leave the
// device: the amax kernels write them into the saved Fp8Metas ([0] x, [1] W, [2] dY) and the GEMMs
// read the inverse scales from there. Backward reads only what forward saved (Xqᵀ, Wqᵀ and their
// metas), never re-casting x or W.
//
// Non-finite inputs: the amax kernels flag them on the device; linear_check_finite_cuda, called at
// a step boundary, throws ErrorKind::non_finite naming "<name>.x", "<name>.w" or "<name>.dy". (The
// bf16 mode has no amax and does not check; the model's all_finite does.)
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "fp8lab/backend.hpp"  // AmaxSlot
#include "fp8lab/fp8_cuda.hpp"
#include "fp8lab/linear.hpp"
#include "fp8lab/tensor.hpp"

namespace fp8lab {

class CublasLtGemm;
class DeviceArena;

enum class LinearCudaMode : std::uint8_t { bf16, fp8_plain, fp8_fused };
const char* linear_cuda_mode_name(LinearCudaMode mode);  // "bf16", "fp8-plain", "fp8-fused"
LinearCudaMode parse_linear_cuda_mode(std::string_view name);
LinearPrecision linear_cuda_precision(LinearCudaMode mode);  // the CPU policy it mirrors

// A second stream and two events: with it, the fp8 forward casts W on the side stream while x
// is cast on the main one (W's small kernels would otherwise run alone on a mostly idle GPU).
class LinearCudaOverlap {
 public:
  LinearCudaOverlap();
  ~LinearCudaOverlap();
  LinearCudaOverlap(const LinearCudaOverlap&) = delete;
  LinearCudaOverlap& operator=(const LinearCudaOverlap&) = delete;
  cudaStream_t side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
};

struct LinearCudaConfig {
  LinearCudaMode mode = LinearCudaMode::bf16;
  std::string name = "linear";
  // FP8 modes: the scaling recipe and wgrad precision (fp8lab/fp8_recipe.hpp). The grouped
  // recipes cast with quantize_grouped_cuda (plain and fused are the same path for them) and
  // take no producer-fused amax.
  Fp8Options fp8{};
  LinearCudaOverlap* overlap = nullptr;  // optional; same bytes with or without
  // Optional, FP8 modes: called as each phase of the call starts on the main stream, with its
  // label ("linear_forward fp8: x cast", "...: W wait", "...: GEMM"; "linear_backward fp8: dY
  // cast", "...: dX GEMM", "...: dW GEMM", "...: dW add" where linear_wgrad_stages_f32), for
  // the CUDA backend's per-op timing. With `overlap` the W casts run on the side stream
  // meanwhile and "W wait" is the main stream's wait for them; without it they come first, as
  // "linear_forward fp8: W cast".
  std::function<void(const char* phase)> phase;
  // Optional, FP8 modes: each cast of x, W and dY flags a non-finite amax here, inside its own
  // launch (CastMetaWork::first_nonfinite), with the id nonfinite_ids[0], [1], [2].
  int* first_nonfinite = nullptr;
  std::array<int, 3> nonfinite_ids{};
};

struct LinearSavedCuda {
  LinearCudaMode mode = LinearCudaMode::bf16;
  Fp8Options fp8{};
  TensorView x, w;                // bf16 mode: the caller's inputs (keep them alive); x also
                                  // under bf16_wgrad
  TensorView xq, xq_t, wq, wq_t;  // fp8 modes: e4m3 [M,K], [K,M], [N,K], [K,N] (no xq_t under
                                  // bf16_wgrad)
  TensorView xq_inv, xq_t_inv, wq_inv, wq_t_inv;  // grouped recipes: f32 inverse scales
  Fp8Meta* meta = nullptr;        // fp8 modes: device metas of x, W, dY
};

// Bytes of the saved state's views under a recipe: what alloc_linear_saved_cuda takes, and
// what the CUDA backend carves out of its pool blocks.
struct LinearFp8Sizes {
  std::int64_t xq, xq_t, wq, wq_t;                  // codes
  std::int64_t xq_inv, xq_t_inv, wq_inv, wq_t_inv;  // f32 counts (0 for tensorwise)
  std::int64_t dyq, dyq_t, dyq_inv, dyq_t_inv;      // the backward's scratch
};
LinearFp8Sizes linear_fp8_sizes(const Fp8Options& fp8, std::int64_t m, std::int64_t k,
                                std::int64_t n);

// Arena memory for the saved state (fp8 buffers + 3 metas) and the backward scratch (dYq, dYqᵀ).
LinearSavedCuda alloc_linear_saved_cuda(DeviceArena& arena, LinearCudaMode mode, std::int64_t m,
                                        std::int64_t k, std::int64_t n, cudaStream_t stream,
                                        const Fp8Options& fp8 = {});
LinearScratch alloc_linear_scratch_cuda(DeviceArena& arena, LinearCudaMode mode, std::int64_t m,
                                        std::int64_t n, const Fp8Options& fp8 = {});

// y.data == nullptr: fill `saved` (the casts) without the GEMM, for a backward-only recompute.
// x_amax (fp8 modes, optional): the slot of a producer-fused amax (AmaxSlot in backend.hpp) that
// already holds x's amax and e4m3 scale, copied into saved.meta[0] instead of reading x for its
// amax (by the cast kernel itself: no launch of its own); a deferred slot holds only the
// producer's keys, from which the cast derives the scale. w_amax likewise for W (its producer
// is the optimizer update that wrote it), and dy_amax for dY (e5m2) in the backward.
void linear_forward_cuda(CublasLtGemm& gemm, const LinearCudaConfig& config, const TensorView& x,
                         const TensorView& w, const TensorView& y, LinearSavedCuda& saved,
                         cudaStream_t stream, AmaxSlot x_amax = {}, AmaxSlot w_amax = {});

// Whether linear_backward_cuda's weight gradient goes through scratch.dw_f32 ([N, K] f32): an
// FP8 wgrad that adds into a bf16 dW. cuBLASLt's FP8 GEMMs round their product to bf16 before
// they add a bf16 C (measured on the H100 under the scalar, outer-vector and vec128 scales:
// bf16(C + bf16(P))), where a bf16 gradient takes one rounding, bf16(float(dW) + P): so the
// product is written in f32, as an f32 dW would hold it, and one add rounds it in.
bool linear_wgrad_stages_f32(const LinearCudaConfig& config, DType dw_dtype, bool accumulate_dw);

// dX (bf16) and dW (f32 or bf16; with accumulate_dw, dW += ...). Where linear_wgrad_stages_f32,
// scratch.dw_f32 must be given (the call is refused without it).
void linear_backward_cuda(CublasLtGemm& gemm, const LinearCudaConfig& config,
                          const LinearSavedCuda& saved, const TensorView& dy, const TensorView& dx,
                          const TensorView& dw, const LinearScratch& scratch, bool accumulate_dw,
                          cudaStream_t stream, AmaxSlot dy_amax = {});

// bf16 mode, with GELU fused into the GEMM's epilogue (CublasLtGemm's gelu_aux): pre = x Wᵀ and
// y = GELU(x Wᵀ), GELU taken of the fp32 product (not of bf16 pre). The GELU that follows an
// MLP's first linear, without a pass of its own; the backward is linear_backward_cuda's.
void linear_gelu_forward_cuda(CublasLtGemm& gemm, const LinearCudaConfig& config,
                              const TensorView& x, const TensorView& w, const TensorView& pre,
                              const TensorView& y, LinearSavedCuda& saved, cudaStream_t stream);

void linear_check_finite_cuda(const LinearCudaConfig& config, const LinearSavedCuda& saved,
                              std::int64_t step, cudaStream_t stream);

// The casts' scales and counts, copied to the host (synchronises): compare with LinearSaved's
// x_scale/x_counts, w_scale/w_counts and LinearBackwardStats.
struct LinearCastStatsCuda {
  Fp8MetaHost x, w, dy;
};
LinearCastStatsCuda read_linear_stats_cuda(const LinearSavedCuda& saved, cudaStream_t stream);

}  // namespace fp8lab
