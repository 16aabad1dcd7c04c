// Kernel launchers of src/fp8/*.cu, called by the checked API in fp8_cuda.cpp.
//
// Why the split: nvcc (13.0, C++20) cannot compile fmt's headers, which every fp8lab header with
// error checks includes. So the .cu files hold kernels and these unchecked launchers only, with
// plain argument types; fp8_cuda.cpp validates views, launches, and checks the launch.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "fp8lab/fp8_format.hpp"
#include "fp8lab/fp8_meta.hpp"

namespace fp8lab::detail {

enum class ElemType : std::uint8_t { f32, bf16 };

void launch_amax_scale(const void* x, ElemType type, std::int64_t n, Fp8Format format,
                       Fp8Meta* meta, int sm_count, cudaStream_t stream);

void launch_quantize(const void* x, ElemType type, std::int64_t n, Fp8Format format, bool hw,
                     Fp8Meta* meta, const CastMetaWork& work, std::uint8_t* q, int sm_count,
                     cudaStream_t stream);

// tiled: rows, cols multiples of 16, pointers 16-byte aligned, rows / 64 <= 65535 (caller checks).
void launch_cast_transpose(const void* x, ElemType type, std::int64_t rows, std::int64_t cols,
                           Fp8Format format, bool hw, bool tiled, Fp8Meta* meta,
                           const CastMetaWork& work, std::uint8_t* q, std::uint8_t* qt,
                           cudaStream_t stream);

void launch_transpose_fp8(const std::uint8_t* q, std::int64_t rows, std::int64_t cols, bool tiled,
                          std::uint8_t* qt, cudaStream_t stream);

// counts[0], counts[1]: mismatches of e4m3, e5m2; *example: one mismatching fp32 pattern.
void launch_conversion_probe(unsigned long long* counts, std::uint32_t* example, int sm_count);

void launch_byte_mismatch(const std::uint8_t* a, const std::uint8_t* b, std::uint64_t n,
                          unsigned long long* count, int sm_count, cudaStream_t stream);

}  // namespace fp8lab::detail
