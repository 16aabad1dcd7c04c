// The kernels of bench/probes/nvml_contention_probe.cpp: an empty launch, to time the host's
// side, and a spin that keeps the GPU busy for a set time, to see whether a host call waits for
// the work queued before it.
#include <cuda_runtime_api.h>

namespace {

__global__ void empty_kernel(float* p) {
  if (p != nullptr && threadIdx.x == 1024) p[0] = 0.0f;  // never true: keeps the launch real
}

__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

}  // namespace

void launch_empty_kernel(int blocks, int threads, float* target, cudaStream_t stream) {
  empty_kernel<<<blocks, threads, 0, stream>>>(target);
}

void launch_spin_kernel(unsigned long long ns, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(ns);
}
