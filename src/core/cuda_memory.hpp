// Device memory: an arena that knows its peak, owned device tensors, host<->device copies.
//
// The arena is one cudaMalloc carved by a bump pointer with stack-like release (mark/release):
// no allocator calls (and no implicit synchronisation) inside a training step, and the high-water
// mark is the step's true peak device memory, a first-class output of the benchmarks.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "fp8lab/tensor.hpp"

namespace fp8lab {

class DeviceArena {
 public:
  static constexpr std::size_t kAlignment = 256;  // cuBLASLt and 16-byte vector kernels need >= 16

  explicit DeviceArena(std::size_t capacity_bytes);
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // Throws ErrorKind::cuda naming `what`, the request and the arena's state when it does not fit.
  void* allocate(std::size_t bytes, const char* what);
  TensorView tensor(DType dtype, const Shape& shape, const char* what);

  std::size_t mark() const { return used_; }
  void release(std::size_t mark);  // frees everything allocated after mark()
  std::size_t used() const { return used_; }
  std::size_t peak() const { return peak_; }
  std::size_t capacity() const { return capacity_; }
  void reset_peak() { peak_ = used_; }

 private:
  char* base_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t used_ = 0;
  std::size_t peak_ = 0;
};

// An owned device tensor (its own cudaMalloc): for tests and long-lived buffers.
class DeviceTensor {
 public:
  DeviceTensor() = default;
  DeviceTensor(DType dtype, Shape shape);
  ~DeviceTensor();
  DeviceTensor(DeviceTensor&& o) noexcept;
  DeviceTensor& operator=(DeviceTensor&& o) noexcept;
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;

  TensorView view() const { return {data_, dtype_, shape_, Device::cuda}; }
  operator TensorView() const { return view(); }

 private:
  void* data_ = nullptr;
  DType dtype_ = DType::f32;
  Shape shape_;
};

// Copies with dtype/shape/device checks (the message names both tensors). Synchronous.
void copy_to_device(const TensorView& host, const TensorView& device);
void copy_to_host(const TensorView& device, const TensorView& host);
HostTensor to_host(const TensorView& device);
DeviceTensor to_device(const TensorView& host);

// Fills a device tensor with a byte pattern (poison before a kernel writes it).
void fill_bytes_cuda(const TensorView& t, unsigned char byte, cudaStream_t stream = nullptr);

}  // namespace fp8lab
