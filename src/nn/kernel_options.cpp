// Names of the kernel families (fp8lab/kernel_options.hpp).
#include "fp8lab/kernel_options.hpp"

#include "fp8lab/error.hpp"

namespace fp8lab {

const char* attention_kernels_name(AttentionKernels k) {
  switch (k) {
    case AttentionKernels::automatic:
      return "auto";
    case AttentionKernels::mma_sync:
      return "mma-sync";
    case AttentionKernels::wgmma:
      return "wgmma";
    case AttentionKernels::wgmma_ws:
      return "wgmma-ws";
    case AttentionKernels::cudnn:
      return "cudnn";
  }
  return "?";
}

AttentionKernels parse_attention_kernels(std::string_view name) {
  for (AttentionKernels k :
       {AttentionKernels::automatic, AttentionKernels::mma_sync, AttentionKernels::wgmma,
        AttentionKernels::wgmma_ws, AttentionKernels::cudnn})
    if (name == attention_kernels_name(k)) return k;
  FP8LAB_FAIL(ErrorKind::invalid_argument,
              "kernels.attention '{}': expected auto, mma-sync, wgmma, wgmma-ws or cudnn", name);
}

}  // namespace fp8lab
