// Checks for CUDA runtime and cuBLAS(Lt) calls, and the GPU probe the tests skip on.
//
// Every CUDA call and every kernel launch goes through one of these macros: a failure throws
// fp8lab::Error(ErrorKind::cuda) carrying the call's text, the runtime's error name and file:line,
// so a failing launch is reported where it happened, not at the next unrelated synchronisation.
// Only compiled with the CUDA backend (FP8LAB_HAVE_CUDA).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string>

#include "fp8lab/error.hpp"

namespace fp8lab {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                   int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);
// After a launch: the launch's own error (bad configuration), and, when the environment sets
// FP8LAB_CUDA_SYNC=1, a device synchronisation so asynchronous faults name their kernel.
void check_launch(const char* kernel, const char* file, int line);

// True when a CUDA device can run our sm_90a kernels. Otherwise false, with the reason in
// *why_not ("no CUDA device: cudaGetDeviceCount returned ...", "device 0 is sm_80, need sm_90").
bool cuda_available(std::string* why_not = nullptr);

// Device properties read once (multiprocessor count drives grid sizes).
int cuda_sm_count();
// The current device's name as the driver reports it ("NVIDIA H200"), read once.
const std::string& cuda_device_name();

}  // namespace fp8lab

#define FP8LAB_CUDA_CHECK(call)                                              \
  do {                                                                       \
    const cudaError_t fp8lab_status_ = (call);                               \
    if (fp8lab_status_ != cudaSuccess) [[unlikely]]                          \
      ::fp8lab::throw_cuda_error(fp8lab_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define FP8LAB_CUBLAS_CHECK(call)                                              \
  do {                                                                         \
    const cublasStatus_t fp8lab_status_ = (call);                              \
    if (fp8lab_status_ != CUBLAS_STATUS_SUCCESS) [[unlikely]]                  \
      ::fp8lab::throw_cublas_error(fp8lab_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define FP8LAB_LAUNCH_CHECK(kernel_name) ::fp8lab::check_launch(kernel_name, __FILE__, __LINE__)
