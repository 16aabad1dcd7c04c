// Helpers for the GPU tests: skip without a GPU, move tensors, compare bytes, read amax slots,
// attention shapes.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "common/test_data.hpp"
#include "core/cuda_check.hpp"
#include "core/cuda_memory.hpp"
#include "fp8lab/fp8_meta.hpp"

// Every GPU test starts with this: CI has nvcc but no GPU, and says so instead of failing.
#define FP8LAB_SKIP_WITHOUT_GPU()                                             \
  do {                                                                        \
    std::string fp8lab_why_;                                                  \
    if (!::fp8lab::cuda_available(&fp8lab_why_)) GTEST_SKIP() << fp8lab_why_; \
  } while (0)

namespace fp8lab::testing {

// Number of differing bytes, and the first differing byte index (-1 when equal).
struct ByteDiff {
  std::int64_t count = 0;
  std::int64_t first = -1;
};

inline ByteDiff byte_diff(const TensorView& a, const TensorView& b) {
  FP8LAB_CHECK(a.nbytes() == b.nbytes(), "byte_diff: {} vs {}", a.describe(), b.describe());
  ByteDiff d;
  const auto* pa = a.as<const std::uint8_t>();
  const auto* pb = b.as<const std::uint8_t>();
  for (std::size_t i = 0; i < a.nbytes(); ++i) {
    if (pa[i] != pb[i]) {
      if (d.first < 0) d.first = static_cast<std::int64_t>(i);
      ++d.count;
    }
  }
  return d;
}

// Expect the device tensor's bytes to equal the host tensor's.
inline void expect_same_bytes(const TensorView& host, const TensorView& device, const char* what) {
  const HostTensor got = to_host(device);
  const ByteDiff d = byte_diff(host, got.view());
  EXPECT_EQ(d.count, 0) << what << ": " << d.count << " of " << host.nbytes()
                        << " bytes differ, first at byte " << d.first << " (" << host.describe()
                        << ")";
}

// The shape of a causal attention call: qkv [rows, 3 d_model], out [rows, d_model].
struct AttentionShape {
  int batch, heads, seq, head_dim;
  std::int64_t rows() const { return static_cast<std::int64_t>(batch) * seq; }
  std::int64_t d_model() const { return static_cast<std::int64_t>(heads) * head_dim; }
  std::string describe() const {
    return "B=" + std::to_string(batch) + " H=" + std::to_string(heads) +
           " T=" + std::to_string(seq) + " hd=" + std::to_string(head_dim);
  }
};

// A device tensor of `dtype`/`shape` poisoned with 0xFF bytes (NaN in every float format).
inline DeviceTensor poisoned_device(DType dtype, Shape shape) {
  DeviceTensor t(dtype, shape);
  fill_bytes_cuda(t.view(), 0xFF);
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  return t;
}

// A device Fp8Meta (an amax slot) on the host, after the device is done writing it.
inline Fp8Meta read_meta(const Fp8Meta* device) {
  Fp8Meta m;
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  FP8LAB_CUDA_CHECK(cudaMemcpy(&m, device, sizeof(m), cudaMemcpyDeviceToHost));
  return m;
}

inline std::string describe(const Fp8Meta& m) {
  char s[200];
  std::snprintf(s, sizeof(s),
                "amax %08x scale %08x inv %08x nonfinite %u sat %llu uf %llu "
                "scratch %08x/%u",
                float_bits(m.amax), float_bits(m.scale), float_bits(m.inv_scale), m.nonfinite,
                m.saturated, m.underflow, m.amax_bits_accum, m.blocks_done);
  return s;
}

// Device memory for one tensor, `offset` elements into its allocation (offset 1: unaligned),
// the rest of the allocation poisoned.
struct DeviceView {
  DeviceTensor storage;
  TensorView view;
  DeviceView(DType dtype, Shape shape, std::int64_t offset)
      : storage(dtype, Shape{shape.numel() + offset + 8}) {
    fill_bytes_cuda(storage.view(), 0xFF);
    // The fill runs on the legacy stream, the backend's ops on its own non-blocking one.
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    view = {static_cast<char*>(storage.view().data) +
                static_cast<std::size_t>(offset) * dtype_size(dtype),
            dtype, shape, Device::cuda};
  }
  DeviceView(const HostTensor& h, std::int64_t offset) : DeviceView(h.dtype(), h.shape(), offset) {
    copy_to_device(h, view);
    // A pageable cudaMemcpy may return before its DMA lands; the backend's stream would not wait.
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
};

}  // namespace fp8lab::testing
