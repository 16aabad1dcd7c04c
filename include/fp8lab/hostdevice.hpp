// FP8LAB_HD marks small inline functions that compile both for the host and for CUDA kernels,
// so the CPU reference and the kernels share one definition of formats and the RNG.
#pragma once

#if defined(__CUDACC__)
#define FP8LAB_HD __host__ __device__ __forceinline__
#else
#define FP8LAB_HD inline
#endif
