// NumPy .npy files (format versions 1.0, 2.0 and 3.0), the exchange format of `fp8lab quantize`.
//
// Reading accepts exactly what fp8lab can use: a 2-D little-endian float32 array in C order
// ('<f4', fortran_order False). Anything else is a typed error naming the problem and the file:
// ErrorKind::io (cannot open/read), ErrorKind::format (bad magic, version, header, truncated or
// trailing data), ErrorKind::dtype (another dtype), ErrorKind::shape (not 2-D), naming the file.
// Writing produces version 1.0 files that numpy.load reads.
#pragma once

#include "fp8lab/tensor.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fp8lab {

// Parses an in-memory .npy image; `source` names it in errors (a path, or "<memory>").
HostTensor parse_npy_f32_2d(std::span<const std::uint8_t> bytes, std::string_view source);

// The largest .npy file read_npy_f32_2d accepts: 2 GiB (512 Mi float32 values). A cast holds the
// input, its FP8 codes twice and a dequantized copy, about 2.5 times the file in memory.
inline constexpr std::uint64_t kMaxNpyFileBytes = std::uint64_t{1} << 31;

// Reads a regular file of at most kMaxNpyFileBytes (anything else, e.g. /dev/zero or a FIFO, is
// an error before any data is read) and parses it as above.
HostTensor read_npy_f32_2d(const std::string& path);

// .npy images: f32 tensors as '<f4', byte tensors (u8, e4m3, e5m2) as '|u1'. Any rank up to 4.
std::vector<std::uint8_t> encode_npy(const TensorView& t);

// encode_npy written to `path` (ErrorKind::io on failure).
void write_npy(const std::string& path, const TensorView& t);

}  // namespace fp8lab
