#include "fp8lab/tensor.hpp"

#include <cstdlib>
#include <cstring>

namespace fp8lab {

const char* device_name(Device d) { return d == Device::cpu ? "cpu" : "cuda"; }

DType parse_dtype(std::string_view name) {
  for (DType t : {DType::f32, DType::bf16, DType::e4m3, DType::e5m2, DType::i32, DType::u16,
                  DType::u8, DType::f64}) {
    if (dtype_name(t) == name) return t;
  }
  FP8LAB_FAIL(ErrorKind::dtype, "unknown dtype '{}' (expected f32, bf16, e4m3, e5m2, i32, u16, u8, f64)",
              name);
}

Shape::Shape(std::initializer_list<std::int64_t> dims) : Shape(std::vector<std::int64_t>(dims)) {}

Shape::Shape(const std::vector<std::int64_t>& dims) {
  FP8LAB_CHECK_KIND(ErrorKind::shape, dims.size() <= kMaxRank, "rank {} exceeds the maximum of {}",
                    dims.size(), kMaxRank);
  rank_ = static_cast<int>(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) {
    FP8LAB_CHECK_KIND(ErrorKind::shape, dims[i] >= 0, "negative dimension {} at axis {}", dims[i], i);
    dims_[i] = dims[i];
  }
}

std::int64_t Shape::numel() const {
  std::int64_t n = 1;
  for (int i = 0; i < rank_; ++i) n *= dims_[static_cast<std::size_t>(i)];
  return n;
}

bool Shape::operator==(const Shape& o) const {
  if (rank_ != o.rank_) return false;
  for (int i = 0; i < rank_; ++i) {
    if (dims_[static_cast<std::size_t>(i)] != o.dims_[static_cast<std::size_t>(i)]) return false;
  }
  return true;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ", ";
    s += std::to_string(dims_[static_cast<std::size_t>(i)]);
  }
  return s + "]";
}

std::int64_t TensorView::rows() const {
  FP8LAB_CHECK_KIND(ErrorKind::shape, shape.rank() == 2, "expected a 2-D tensor, got {}", describe());
  return shape[0];
}

std::int64_t TensorView::cols() const {
  FP8LAB_CHECK_KIND(ErrorKind::shape, shape.rank() == 2, "expected a 2-D tensor, got {}", describe());
  return shape[1];
}

std::string TensorView::describe() const {
  return fmt::format("{}{} on {}", dtype_name(dtype), shape.str(), device_name(device));
}

void check_dtype(const TensorView& t, DType expected, const char* what) {
  FP8LAB_CHECK_KIND(ErrorKind::dtype, t.dtype == expected, "{} must be {}, got {}", what,
                    dtype_name(expected), t.describe());
}

void check_shape(const TensorView& t, const Shape& expected, const char* what) {
  FP8LAB_CHECK_KIND(ErrorKind::shape, t.shape == expected, "{} must have shape {}, got {}", what,
                    expected.str(), t.describe());
}

void check_rank(const TensorView& t, int rank, const char* what) {
  FP8LAB_CHECK_KIND(ErrorKind::shape, t.shape.rank() == rank, "{} must be {}-D, got {}", what, rank,
                    t.describe());
}

void check_device(const TensorView& t, Device expected, const char* what) {
  FP8LAB_CHECK_KIND(ErrorKind::invalid_argument, t.device == expected, "{} must be on {}, got {}",
                    what, device_name(expected), t.describe());
}

void HostTensor::FreeDeleter::operator()(void* p) const { std::free(p); }

HostTensor::HostTensor(DType dtype, Shape shape) : dtype_(dtype), shape_(shape) {
  std::size_t bytes = static_cast<std::size_t>(shape.numel()) * dtype_size(dtype);
  std::size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  void* p = std::aligned_alloc(64, rounded);
  FP8LAB_CHECK_KIND(ErrorKind::out_of_memory, p != nullptr, "host allocation of {} bytes failed",
                    rounded);
  std::memset(p, 0, rounded);
  buffer_.reset(p);
}

}  // namespace fp8lab
