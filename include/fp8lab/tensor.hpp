// Tensor views (non-owning, contiguous, row-major) and an owning host tensor.
//
// A view is a pointer plus dtype, shape and device: ops take views so that the caller decides
// where memory comes from (host vectors, the device arena). Shapes print as [1481, 677].
#pragma once

#include "fp8lab/dtype.hpp"
#include "fp8lab/error.hpp"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace fp8lab {

enum class Device : std::uint8_t { cpu, cuda };
const char* device_name(Device d);

class Shape {
 public:
  static constexpr int kMaxRank = 4;
  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims);
  explicit Shape(const std::vector<std::int64_t>& dims);

  int rank() const { return rank_; }
  std::int64_t operator[](int i) const { return dims_[static_cast<std::size_t>(i)]; }
  std::int64_t numel() const;
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string str() const;  // "[1481, 677]"

 private:
  std::array<std::int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

struct TensorView {
  void* data = nullptr;
  DType dtype = DType::f32;
  Shape shape;
  Device device = Device::cpu;

  std::int64_t numel() const { return shape.numel(); }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }
  std::int64_t rows() const;  // 2-D views: shape[0]
  std::int64_t cols() const;  // 2-D views: shape[1]
  std::string describe() const;  // "bf16[1481, 677] on cpu"

  template <typename T>
  T* as() const { return static_cast<T*>(data); }
};

// Checks used at API boundaries; the message names the tensor and what was expected.
void check_dtype(const TensorView& t, DType expected, const char* what);
void check_shape(const TensorView& t, const Shape& expected, const char* what);
void check_rank(const TensorView& t, int rank, const char* what);
void check_device(const TensorView& t, Device expected, const char* what);

// Owning host memory, 64-byte aligned (AVX-512 loads, and cache lines for OpenMP splits).
class HostTensor {
 public:
  HostTensor() = default;
  HostTensor(DType dtype, Shape shape);

  TensorView view() const { return {buffer_.get(), dtype_, shape_, Device::cpu}; }
  operator TensorView() const { return view(); }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::int64_t numel() const { return shape_.numel(); }
  std::size_t nbytes() const { return view().nbytes(); }
  template <typename T>
  T* as() const { return static_cast<T*>(buffer_.get()); }

 private:
  struct FreeDeleter { void operator()(void* p) const; };
  std::unique_ptr<void, FreeDeleter> buffer_;
  DType dtype_ = DType::f32;
  Shape shape_;
};

}  // namespace fp8lab
