// How the CUDA backend lays out an FP8 linear's saved state in its pool blocks (shared by
// linear_forward, cuda_linear_op.cpp, and the W casts made ahead of it, cuda_linear_prepare.cpp).
//
//   kept:      Xqᵀ [K, M], Wqᵀ [K, N], then the three Fp8Metas (x, W, dY)
//   prepared:  the W part alone (Wqᵀ, then the metas) in a block of its own, cast before the
//              forward; the forward's kept block then holds only Xqᵀ
// and the transients Xq [M, K] and Wq [N, K], given back once the forward GEMM is queued.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fp8lab/fp8_meta.hpp"
#include "fp8lab/tensor.hpp"

namespace fp8lab::cuda {

inline std::size_t u(std::int64_t v) { return static_cast<std::size_t>(v); }

// Carves consecutive 256-byte aligned views out of one pool block.
class Carver {
 public:
  explicit Carver(void* base) : next_(static_cast<char*>(base)) {}
  static std::size_t size(std::size_t bytes) { return (bytes + 255) / 256 * 256; }
  void* take(std::size_t bytes) {
    void* p = next_;
    next_ += size(bytes);
    return p;
  }
  TensorView tensor(DType dtype, const Shape& shape) {
    TensorView v{nullptr, dtype, shape, Device::cuda};
    v.data = take(v.nbytes());
    return v;
  }

 private:
  char* next_;
};

// The W part of the kept state: Wqᵀ [K, N] e4m3 and the linear's three metas.
struct WeightState {
  TensorView wq_t;
  Fp8Meta* meta = nullptr;
};
inline std::size_t weight_state_bytes(std::int64_t k, std::int64_t n) {
  return Carver::size(u(k * n)) + Carver::size(3 * sizeof(Fp8Meta));
}
inline WeightState carve_weight_state(Carver& carve, std::int64_t k, std::int64_t n) {
  WeightState s;
  s.wq_t = carve.tensor(DType::e4m3, {k, n});
  s.meta = static_cast<Fp8Meta*>(carve.take(3 * sizeof(Fp8Meta)));
  return s;
}

}  // namespace fp8lab::cuda
