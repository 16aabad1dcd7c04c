// Consecutive 256-byte aligned device views out of one allocation: the CUDA backend's pool
// blocks and the C layer's stream-ordered blocks hold several tensors each (an FP8 linear's
// saved operands and scales, its backward scratch). With a null base a Carver only measures
// (take returns null), so the same carving code sizes a block and then fills it.
#pragma once

#include "fp8lab/tensor.hpp"

#include <cstddef>
#include <cstdint>

namespace fp8lab {

class Carver {
 public:
  explicit Carver(void* base) : base_(static_cast<char*>(base)) {}
  // What a piece of `bytes` takes, its alignment padding included.
  static std::size_t size(std::size_t bytes) { return (bytes + 255) / 256 * 256; }
  void* take(std::size_t bytes) {
    void* p = base_ == nullptr ? nullptr : base_ + used_;
    used_ += size(bytes);
    return p;
  }
  TensorView tensor(DType dtype, const Shape& shape) {
    TensorView v{nullptr, dtype, shape, Device::cuda};
    v.data = take(v.nbytes());
    return v;
  }
  // `count` f32 scales, or none (tensorwise: the scale lives in the Fp8Meta).
  TensorView scales(std::int64_t count) {
    return count == 0 ? TensorView{} : tensor(DType::f32, {count});
  }
  std::size_t used() const { return used_; }

 private:
  char* base_;
  std::size_t used_ = 0;
};

}  // namespace fp8lab
