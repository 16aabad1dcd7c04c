// Device arena, owned device tensors and checked copies (see src/core/cuda_memory.hpp).
#if defined(FP8LAB_HAVE_CUDA)
#include "core/cuda_memory.hpp"

#include <utility>

#include "core/cuda_check.hpp"

namespace fp8lab {

DeviceArena::DeviceArena(std::size_t capacity_bytes) : capacity_(capacity_bytes) {
  FP8LAB_CHECK(capacity_bytes > 0, "device arena capacity must be positive");
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, capacity_bytes);
  if (status != cudaSuccess) {
    cudaGetLastError();
    FP8LAB_FAIL(ErrorKind::cuda, "cannot reserve a device arena of {} MiB: {}",
                capacity_bytes >> 20, cudaGetErrorString(status));
  }
  base_ = static_cast<char*>(p);
}

DeviceArena::~DeviceArena() {
  if (base_) cudaFree(base_);
}

void* DeviceArena::allocate(std::size_t bytes, const char* what) {
  const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  FP8LAB_CHECK_KIND(ErrorKind::cuda, rounded <= capacity_ - used_,
                    "device arena: '{}' needs {} bytes, {} of {} in use", what, bytes, used_,
                    capacity_);
  void* p = base_ + used_;
  used_ += rounded;
  if (used_ > peak_) peak_ = used_;
  return p;
}

TensorView DeviceArena::tensor(DType dtype, const Shape& shape, const char* what) {
  const std::size_t bytes = static_cast<std::size_t>(shape.numel()) * dtype_size(dtype);
  return {allocate(bytes, what), dtype, shape, Device::cuda};
}

void DeviceArena::release(std::size_t mark) {
  FP8LAB_CHECK(mark <= used_, "device arena: release to {} but only {} bytes are in use", mark,
               used_);
  used_ = mark;
}

DeviceTensor::DeviceTensor(DType dtype, Shape shape) : dtype_(dtype), shape_(shape) {
  const std::size_t bytes = static_cast<std::size_t>(shape.numel()) * dtype_size(dtype);
  if (bytes > 0) FP8LAB_CUDA_CHECK(cudaMalloc(&data_, bytes));
}

DeviceTensor::~DeviceTensor() {
  if (data_) cudaFree(data_);
}

DeviceTensor::DeviceTensor(DeviceTensor&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), dtype_(o.dtype_), shape_(o.shape_) {}

DeviceTensor& DeviceTensor::operator=(DeviceTensor&& o) noexcept {
  if (this != &o) {
    if (data_) cudaFree(data_);
    data_ = std::exchange(o.data_, nullptr);
    dtype_ = o.dtype_;
    shape_ = o.shape_;
  }
  return *this;
}

static void check_copy_pair(const TensorView& host, const TensorView& device) {
  FP8LAB_CHECK_KIND(ErrorKind::dtype, host.dtype == device.dtype,
                    "copy between {} and {}: dtypes differ", host.describe(), device.describe());
  FP8LAB_CHECK_KIND(ErrorKind::shape, host.shape == device.shape,
                    "copy between {} and {}: shapes differ", host.describe(), device.describe());
  check_device(host, Device::cpu, "host side of a copy");
  check_device(device, Device::cuda, "device side of a copy");
}

void copy_to_device(const TensorView& host, const TensorView& device) {
  check_copy_pair(host, device);
  FP8LAB_CUDA_CHECK(cudaMemcpy(device.data, host.data, host.nbytes(), cudaMemcpyHostToDevice));
}

void copy_to_host(const TensorView& device, const TensorView& host) {
  check_copy_pair(host, device);
  FP8LAB_CUDA_CHECK(cudaMemcpy(host.data, device.data, host.nbytes(), cudaMemcpyDeviceToHost));
}

HostTensor to_host(const TensorView& device) {
  HostTensor h(device.dtype, device.shape);
  copy_to_host(device, h.view());
  return h;
}

DeviceTensor to_device(const TensorView& host) {
  DeviceTensor d(host.dtype, host.shape);
  copy_to_device(host, d.view());
  return d;
}

void fill_bytes_cuda(const TensorView& t, unsigned char byte, cudaStream_t stream) {
  check_device(t, Device::cuda, "tensor to fill");
  FP8LAB_CUDA_CHECK(cudaMemsetAsync(t.data, byte, t.nbytes(), stream));
}

}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
