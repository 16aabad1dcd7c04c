// FP8 scaling recipes: which values of an FP8 linear's operands share one FP32 scale.
//
// An FP8 linear y = x Wᵀ runs three GEMMs, each contracting over another axis:
//   forward  y  = x · Wᵀ     contracts K: x [M, K] and W [N, K]
//   dgrad    dX = dY · W     contracts N: dY [M, N] and Wᵀ [K, N]
//   wgrad    dW = dYᵀ · x    contracts M: dYᵀ [N, M] and xᵀ [K, M]
// Every tensor is therefore cast twice: once in its own layout (q) and once transposed (qt),
// each with the groups its GEMM needs along that GEMM's contraction axis:
//
//   recipe      x: q / qt            W: q / qt              dY: q / qt
//   tensorwise  tensor / tensor      tensor / tensor        tensor / tensor
//   rowwise     row / row            row / row              row / row
//   blockwise   vec128 / vec128      block128 / block128    vec128 / vec128
//
// (ScaleMode in fp8lab/fp8_scale_layout.hpp.) Where q and qt share their groups (tensorwise; the
// 128x128 blocks of W, which are the same blocks transposed) qt is q transposed: the backward
// reuses the forward-rounded values, as design.md §2 asks. Where they do not (rowwise, and the
// 1x128 tiles of x and dY), qt is a cast of its own from the BF16 tensor: a row's scale in x is
// a scale per token, while the wgrad needs one per channel over the tokens. Both casts read the
// BF16 tensor in the forward (x, W) or the backward (dY), so no BF16 copy is kept for them.
//
// x and W are E4M3, dY E5M2, in every recipe. bf16_wgrad keeps the weight-gradient GEMM in BF16
// (from the BF16 dY and x; the linear then keeps its BF16 x instead of xqᵀ), to locate how much
// of FP8's loss comes from that GEMM.
#pragma once

#include "fp8lab/fp8_format.hpp"
#include "fp8lab/fp8_scale_layout.hpp"

#include <cstdint>
#include <string_view>

namespace fp8lab {

enum class Fp8Recipe : std::uint8_t { tensorwise, rowwise, blockwise };
const char* fp8_recipe_name(Fp8Recipe r);         // "tensorwise", "rowwise", "blockwise"
Fp8Recipe parse_fp8_recipe(std::string_view name);  // throws ErrorKind::invalid_argument

// What an FP8 linear does, beyond being FP8: chosen per run (precision config), recorded in it.
struct Fp8Options {
  Fp8Recipe recipe = Fp8Recipe::tensorwise;
  bool bf16_wgrad = false;
  bool operator==(const Fp8Options&) const = default;
};

enum class Fp8Role : std::uint8_t { x, w, dy };

struct OperandScaling {
  ScaleMode q;   // groups of the tensor in its own layout
  ScaleMode qt;  // groups of its transpose
  bool qt_is_transpose_of_q;  // same groups: qt holds q's bytes transposed
};

FP8LAB_HD constexpr OperandScaling operand_scaling(Fp8Recipe recipe, Fp8Role role) {
  switch (recipe) {
    case Fp8Recipe::rowwise:
      return {ScaleMode::row, ScaleMode::row, false};
    case Fp8Recipe::blockwise:
      return role == Fp8Role::w ? OperandScaling{ScaleMode::block128, ScaleMode::block128, true}
                                : OperandScaling{ScaleMode::vec128, ScaleMode::vec128, false};
    default:
      return {ScaleMode::tensor, ScaleMode::tensor, true};
  }
}

FP8LAB_HD constexpr Fp8Format fp8_role_format(Fp8Role role) {
  return role == Fp8Role::dy ? Fp8Format::e5m2 : Fp8Format::e4m3;
}

// The multiple every GEMM dimension of a linear under `recipe` must be: 16 (cuBLASLt's FP8
// kernels), or 128 for blockwise (every contraction axis tiled by whole 128-wide groups).
FP8LAB_HD constexpr std::int64_t fp8_recipe_alignment(Fp8Recipe recipe) {
  return recipe == Fp8Recipe::blockwise ? kScaleBlock : 16;
}

}  // namespace fp8lab
