// How the FP8 operand of a GEMM shares its FP32 scales, and where each scale is stored.
//
// An operand is a row-major [rows, cols] tensor whose cols run along the GEMM's contraction axis
// (the K-major operands Hopper's FP8 GEMMs take). Its values are cut into groups; every group
// has one scale = fmax / amax(group) for its cast, and the GEMM multiplies by 1 / scale:
//
//   tensor    one group: the whole tensor                 (cuBLASLt SCALAR_32F)
//   row       1 x cols: one scale per row                 (cuBLASLt OUTER_VEC_32F)
//   vec128    1 x 128 along the contraction axis          (cuBLASLt VEC128_32F)
//   block128  128 x 128                                   (cuBLASLt BLK128x128_32F)
//
// The inverse scales lie in the order cuBLASLt reads them, and the CPU reference and the CUDA
// kernels share this one definition:
//   tensor    [1]
//   row       [rows]
//   vec128    [col groups][rows]: the rows of one 128-wide column group are contiguous
//   block128  [row groups][ld], ld = col groups rounded up to a multiple of 4 (16 bytes); the
//             padding entries hold 1 and are never read by a valid block
// Edge groups may be partial (a dimension that is not a multiple of 128): their amax is over the
// values that exist. The GEMMs need whole groups along K (src/gemm/gemm.hpp says which multiples).
// Kept free of fmt so CUDA translation units can include it.
#pragma once

#include "fp8lab/hostdevice.hpp"

#include <cstdint>

namespace fp8lab {

enum class ScaleMode : std::uint8_t { tensor, row, vec128, block128 };

inline constexpr std::int64_t kScaleBlock = 128;

struct ScaleLayout {
  ScaleMode mode = ScaleMode::tensor;
  std::int64_t rows = 0, cols = 0;

  FP8LAB_HD std::int64_t group_rows() const {
    return mode == ScaleMode::block128 ? kScaleBlock : mode == ScaleMode::tensor ? rows : 1;
  }
  FP8LAB_HD std::int64_t group_cols() const {
    return mode == ScaleMode::vec128 || mode == ScaleMode::block128 ? kScaleBlock : cols;
  }
  FP8LAB_HD std::int64_t row_groups() const { return ceil_div(rows, group_rows()); }
  FP8LAB_HD std::int64_t col_groups() const { return ceil_div(cols, group_cols()); }
  // The leading dimension of the stored scales (see above).
  FP8LAB_HD std::int64_t ld() const {
    switch (mode) {
      case ScaleMode::vec128:
        return rows;
      case ScaleMode::block128:
        return (col_groups() + 3) / 4 * 4;
      default:
        return 1;
    }
  }
  // How many floats the stored scales take.
  FP8LAB_HD std::int64_t count() const {
    switch (mode) {
      case ScaleMode::row:
        return rows;
      case ScaleMode::vec128:
        return col_groups() * rows;
      case ScaleMode::block128:
        return row_groups() * ld();
      default:
        return 1;
    }
  }
  // Where the scale of group (row group rg, column group cg) is stored.
  FP8LAB_HD std::int64_t index(std::int64_t rg, std::int64_t cg) const {
    switch (mode) {
      case ScaleMode::row:
        return rg;
      case ScaleMode::vec128:
        return cg * rows + rg;
      case ScaleMode::block128:
        return rg * ld() + cg;
      default:
        return 0;
    }
  }
  // The scale of element (r, c).
  FP8LAB_HD std::int64_t index_of(std::int64_t r, std::int64_t c) const {
    return index(r / group_rows(), c / group_cols());
  }

 private:
  FP8LAB_HD static std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
    return b <= 0 ? 0 : (a + b - 1) / b;
  }
};

}  // namespace fp8lab
