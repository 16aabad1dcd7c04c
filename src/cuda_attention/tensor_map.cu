// TMA tensor maps (tensor_map.hpp). A .cu file for the runtime's driver entry point: the
// encoder is found through cudaGetDriverEntryPointByVersion, so nothing links against libcuda.
#include "cuda_attention/tensor_map.hpp"

#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

namespace fp8lab::cuda_ops {
namespace {

// cuTensorMapEncodeTiled through the runtime's driver entry point; null when the driver has none.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

}  // namespace

bool tma_available() { return tensor_map_encoder() != nullptr; }

bool encode_token_tile_map(CUtensorMap* map, const void* base, std::uint64_t width, int seq_len,
                           int batch) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint64_t dims[3] = {width, static_cast<cuuint64_t>(seq_len),
                              static_cast<cuuint64_t>(batch)};
  const cuuint64_t strides[2] = {width * 2, width * 2 * static_cast<cuuint64_t>(seq_len)};
  const cuuint32_t box[3] = {kTmaBoxCols, kTmaBoxRows, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(base), dims, strides,
                box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

}  // namespace fp8lab::cuda_ops
