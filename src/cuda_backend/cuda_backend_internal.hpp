// Checks shared by the CUDA backend's op files (src/cuda_backend/cuda_*.cpp); private to them.
#pragma once

#include "fp8lab/backend.hpp"
#include "fp8lab/tensor.hpp"
#include "cuda_kernels/cuda_ops_launch.hpp"

#include <cstdint>

namespace fp8lab::cuda {

// The kernels' element type of an f32 or bf16 device tensor; anything else is an Error naming
// `what` and the tensor.
cuda_ops::ElemType elem_type(const TensorView& t, const char* what);
// A parameter gradient's element type: a device tensor, f32 or bf16 (nn::check_grad_dtype).
cuda_ops::ElemType grad_type(const TensorView& grad, const char* what);
void check_f32(const TensorView& t, const char* what);   // device and f32
void check_bf16(const TensorView& t, const char* what);  // device and bf16
int to_int(std::int64_t v, const char* what);             // kernels take int sizes
// A producer op's AmaxSlot as its kernel's AmaxOut (no slot: no amax).
inline cuda_ops::AmaxOut amax_out(AmaxSlot slot) {
  return {slot.meta, slot.format, slot.deferred};
}

}  // namespace fp8lab::cuda
