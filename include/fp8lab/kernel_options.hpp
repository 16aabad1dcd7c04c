// Which kernels a backend runs where more than one family can do the same op.
//
// Every family of an op gives the same bits (tests/cuda/test_cuda_attention.cpp checks it), so
// the choice changes speed alone. It is made once, when the backend is built (make_backend in
// fp8lab/backend.hpp), from the run's configuration (RunConfig::kernels, JSON section "kernels",
// written to run.json), never from the environment. docs/cuda-backend.md, "Attention", has the
// table of which family runs at which head dimension.
#pragma once

#include <cstdint>
#include <string_view>

namespace fp8lab {

// The CUDA attention families. automatic = the fastest one built for the head dimension.
//   mma_sync: mma.sync kernels (forward, two-pass backward), hd 32, 64 and 128; the reference.
//   wgmma:    Hopper warpgroup MMA with cp.async tiles, hd 64 and 128.
//   wgmma_ws: wgmma fed by TMA through mbarrier stages with warp specialisation; forward at
//             hd 128, backward at hd 64 and 128.
// A family not built for a head dimension, or a TMA family on a driver without tensor-map
// encoding, runs the next one down the list (wgmma_ws, wgmma, mma_sync).
enum class AttentionKernels : std::uint8_t { automatic, mma_sync, wgmma, wgmma_ws };
const char* attention_kernels_name(AttentionKernels k);  // "auto", "mma-sync", "wgmma", "wgmma-ws"
AttentionKernels parse_attention_kernels(std::string_view name);  // throws naming the bad string

struct KernelOptions {
  AttentionKernels attention = AttentionKernels::automatic;
  bool operator==(const KernelOptions&) const = default;
};

}  // namespace fp8lab
