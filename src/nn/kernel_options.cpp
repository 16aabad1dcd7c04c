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
    case AttentionKernels::cudnn_forward:
      return "cudnn-forward";
  }
  return "?";
}

AttentionKernels parse_attention_kernels(std::string_view name) {
  for (AttentionKernels k :
       {AttentionKernels::automatic, AttentionKernels::mma_sync, AttentionKernels::wgmma,
        AttentionKernels::wgmma_ws, AttentionKernels::cudnn, AttentionKernels::cudnn_forward})
    if (name == attention_kernels_name(k)) return k;
  FP8LAB_FAIL(ErrorKind::invalid_argument,
              "kernels.attention '{}': expected auto, mma-sync, wgmma, wgmma-ws, cudnn or "
              "cudnn-forward",
              name);
}

AttentionKernels attention_kernels_for(AttentionKernels requested, bool forward) {
  if (requested != AttentionKernels::cudnn_forward) return requested;
  return forward ? AttentionKernels::cudnn : AttentionKernels::automatic;
}

}  // namespace fp8lab
