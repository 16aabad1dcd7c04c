// Launchers of the grouped casts (src/fp8/grouped_cast_cuda.cu), called by the checked API in
// grouped_cast_cuda.cpp. Plain argument types: nvcc cannot compile fmt (see fp8_launch.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "fp8lab/fp8_format.hpp"
#include "fp8lab/fp8_meta.hpp"
#include "fp8lab/fp8_scale_layout.hpp"

namespace fp8lab::detail {

// One cast of bf16 x [rows, cols] into q (its own layout) and, when qt is non-null, qt (the
// transposed layout), with the groups of `mode` over x and over xᵀ (fp8lab/fp8_recipe.hpp).
struct GroupedCastArgs {
  const std::uint16_t* x = nullptr;
  std::int64_t rows = 0, cols = 0;
  std::uint8_t* q = nullptr;
  float* q_inv = nullptr;  // ScaleMode::row: holds the rows' amax keys (pass 1) instead
  ScaleLayout q_layout;
  std::uint8_t* qt = nullptr;
  float* qt_inv = nullptr;  // ScaleMode::row: holds the columns' amax keys instead
  ScaleLayout qt_layout;
  Fp8Meta* meta = nullptr;  // zeroed before: amax (as key bits), non-finite flag, counts
  int* first_nonfinite = nullptr;
  int nonfinite_id = 0;
};

// ScaleMode::row, pass 1: the amax keys of every row into q_inv and of every column into qt_inv
// (both zeroed before; qt_inv only when qt is set).
void launch_grouped_row_col_keys(const GroupedCastArgs& args, cudaStream_t stream);
// The cast: vec128 and block128 find their groups' amax inside the tile; row reads pass 1's keys.
void launch_grouped_cast(const GroupedCastArgs& args, ScaleMode mode, Fp8Format format, bool hw,
                         cudaStream_t stream);
// ScaleMode::row, pass 3: the keys in `keys` [n] turned into inverse scales in place.
void launch_keys_to_inverse_scales(float* keys, std::int64_t n, Fp8Format format,
                                   cudaStream_t stream);

}  // namespace fp8lab::detail
