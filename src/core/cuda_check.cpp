// CUDA error reporting and the GPU probe (see src/core/cuda_check.hpp).
#if defined(FP8LAB_HAVE_CUDA)
#include "core/cuda_check.hpp"

#include "fp8lab/environment.hpp"

namespace fp8lab {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  cudaGetLastError();  // clear a sticky-free error so the next call does not report it again
  throw_error(ErrorKind::cuda,
              fmt::format("{} ({}): {}", cudaGetErrorName(status), static_cast<int>(status),
                          cudaGetErrorString(status)),
              call, file, line);
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw_error(
      ErrorKind::cuda,
      fmt::format("cuBLAS status {} ({})", cublasLtGetStatusName(status), static_cast<int>(status)),
      call, file, line);
}

void check_launch(const char* kernel, const char* file, int line) {
  cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess && environment().cuda_sync_after_launch)
    status = cudaDeviceSynchronize();
  if (status != cudaSuccess) [[unlikely]] {
    throw_error(ErrorKind::cuda,
                fmt::format("kernel {} failed: {} ({})", kernel, cudaGetErrorName(status),
                            cudaGetErrorString(status)),
                "launch", file, line);
  }
}

bool cuda_available(std::string* why_not) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  std::string reason;
  if (status != cudaSuccess) {
    cudaGetLastError();
    reason = fmt::format("no CUDA GPU: cudaGetDeviceCount returned {}", cudaGetErrorName(status));
  } else if (count == 0) {
    reason = "no CUDA GPU: cudaGetDeviceCount found 0 devices";
  } else {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
      cudaGetLastError();
      reason = "no CUDA GPU: cudaGetDeviceProperties(0) failed";
    } else if (prop.major != 9 || prop.minor != 0) {
      reason = fmt::format(
          "no usable CUDA GPU: device 0 ({}) is sm_{}{}, kernels are built for "
          "sm_90a only",
          prop.name, prop.major, prop.minor);
    }
  }
  if (why_not) *why_not = reason;
  return reason.empty();
}

int cuda_sm_count() {
  static const int count = [] {
    int device = 0;
    int n = 0;
    FP8LAB_CUDA_CHECK(cudaGetDevice(&device));
    FP8LAB_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
    return n;
  }();
  return count;
}

const std::string& cuda_device_name() {
  static const std::string name = [] {
    int device = 0;
    cudaDeviceProp prop{};
    FP8LAB_CUDA_CHECK(cudaGetDevice(&device));
    FP8LAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    return std::string(prop.name);
  }();
  return name;
}

}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
