// Which kernels a backend runs where more than one family can do the same op.
//
// Every own family of an op gives the same bits (tests/cuda/test_cuda_attention.cpp checks it),
// so choosing among them changes speed alone; cuDNN's attention is other arithmetic, within the
// same bounds of the CPU reference, and is only run when asked for. The choice is made once, when
// the backend is built (make_backend in fp8lab/backend.hpp), from the run's configuration
// (RunConfig::kernels, JSON section "kernels", written to run.json), never from the environment.
// docs/cuda-backend.md, "Attention", has the table of which family runs at which head dimension.
#pragma once

#include <cstdint>
#include <string_view>

namespace fp8lab {

// The CUDA attention families. automatic = the fastest one built for the head dimension.
//   mma_sync: mma.sync kernels (forward, two-pass backward), hd 32, 64 and 128; the reference.
//   wgmma:    Hopper warpgroup MMA with cp.async tiles, hd 64 and 128.
//   wgmma_ws: wgmma fed by TMA through mbarrier stages with warp specialisation; forward at
//             hd 128, backward at hd 64 and 128.
//   cudnn:    cuDNN's fused scaled-dot-product attention through its graph API, loaded at run
//             time (libcudnn.so.9, or the file FP8LAB_CUDNN_LIBRARY names); hd 32, 64 and 128;
//             deterministic (its deterministic backward); not bit-identical to the own families.
//   cudnn_forward: cuDNN's forward with the own backward (automatic's family), through cuDNN's
//             Stats, which are the own kernels' lse: where cuDNN's forward is the faster and the
//             own backward the faster or as fast, without cuDNN's backward workspace.
// A family not built for a head dimension, or a TMA family on a driver without tensor-map
// encoding, runs the next one down the list (wgmma_ws, wgmma, mma_sync); cudnn without the
// library, or with a cuDNN that cannot build the graph, runs `automatic`'s choice, with one line
// on stderr saying why.
enum class AttentionKernels : std::uint8_t {
  automatic,
  mma_sync,
  wgmma,
  wgmma_ws,
  cudnn,
  cudnn_forward
};
// "auto", "mma-sync", "wgmma", "wgmma-ws", "cudnn", "cudnn-forward"
const char* attention_kernels_name(AttentionKernels k);
AttentionKernels parse_attention_kernels(std::string_view name);  // throws naming the bad string
// The family a request names for one direction: cudnn_forward is cudnn forward and automatic
// backward; every other request is itself in both.
AttentionKernels attention_kernels_for(AttentionKernels requested, bool forward);

struct KernelOptions {
  AttentionKernels attention = AttentionKernels::automatic;
  bool operator==(const KernelOptions&) const = default;
};

}  // namespace fp8lab
