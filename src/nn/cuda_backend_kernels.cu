// Small bookkeeping kernels of the CUDA backend (see nn/cuda_ops_launch.hpp).
#include "nn/cuda_ops_launch.hpp"

namespace fp8lab::cuda_ops {
namespace {

__global__ void record_nonfinite_kernel(const Fp8Meta* metas, int count, int id, int* first_bad) {
  for (int i = 0; i < count; ++i) {
    if (metas[i].nonfinite != 0u) {
      atomicMin(first_bad, id);  // integer min: the same answer whatever the order
      return;
    }
  }
}

}  // namespace

void record_nonfinite(const Fp8Meta* metas, int count, int id, int* first_bad,
                      cudaStream_t stream) {
  record_nonfinite_kernel<<<1, 1, 0, stream>>>(metas, count, id, first_bad);
}

}  // namespace fp8lab::cuda_ops
