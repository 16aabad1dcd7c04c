// Hopper's tensor memory accelerator (TMA) and shared-memory mbarriers, for kernels whose tiles
// are loaded by one producer thread instead of by every thread (cuda_attention_forward_ws.cu,
// cuda_attention_backward_ws.cu).
// sm_90a only.
//
// A transaction barrier (mbarrier) completes a phase when its expected arrivals have arrived
// and the bytes announced with expect_tx have landed; waiters name the phase by its parity
// (the k-th completion has parity k & 1). TMA loads count their bytes against the barrier
// they name, so a consumer that has seen the phase complete sees the tile.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "cuda_attention/attention_tiles.cuh"  // smem_addr
#include "cuda_attention/tensor_map.hpp"       // kTmaBoxRows, kTmaBoxCols

namespace fp8lab::cuda_ops {
namespace {

__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(arrivals)
               : "memory");
}

// After the barriers' initialisation, before any thread or the TMA unit uses them (followed by
// a CTA barrier).
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival that also announces `bytes` more to land in this phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}

// Blocks until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT:\n"  // labels are local to the braces' scope
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// The box at coordinates (c0, c1, c2) of the 3-D tensor map into shared memory at `dst`
// (aligned as the map's swizzle needs), its bytes counted against `bar`.
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, int c0, int c1,
                                            int c2, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar))
      : "memory");
}

// The sw128 tile of ROWS (a multiple of kTmaBoxRows) x HD at dst, from a token map's columns
// col0.. and token rows row0.. of batch b (tensor_map.hpp): kTmaBoxRows x kTmaBoxCols boxes,
// panel by panel (wgmma.cuh's layout: panel p holds columns 64p.. of all rows), their bytes
// counted against `bar`.
template <int HD, int ROWS, typename T>
__device__ __forceinline__ void tma_load_tile(T* dst, const CUtensorMap* map, int col0, int row0,
                                              int b, std::uint64_t* bar) {
#pragma unroll
  for (int p = 0; p < HD / kTmaBoxCols; ++p)
#pragma unroll
    for (int rb = 0; rb < ROWS / kTmaBoxRows; ++rb)
      tma_load_3d(dst + p * ROWS * kTmaBoxCols + rb * kTmaBoxRows * kTmaBoxCols, map,
                  col0 + p * kTmaBoxCols, row0 + rb * kTmaBoxRows, b, bar);
}

// A ring of STAGES tile stages handed from a producer to consumers through full and empty
// mbarriers (the warp-specialised attention kernels). Use n (0, 1, ...) goes to stage n % STAGES;
// its phases have parity (n / STAGES) & 1.
template <int STAGES>
struct StageRing {
  std::uint64_t* full;   // [STAGES]: the producer's arrivals + the stage's TMA bytes
  std::uint64_t* empty;  // [STAGES]: every consumer thread, once done with the stage

  // By one thread, before the CTA barrier that precedes any use (after mbarrier_init_fence).
  __device__ __forceinline__ void init(unsigned full_arrivals, unsigned empty_arrivals) const {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(&full[s], full_arrivals);
      mbarrier_init(&empty[s], empty_arrivals);
    }
  }
  static __device__ __forceinline__ int stage(int n) { return n % STAGES; }
  __device__ __forceinline__ std::uint64_t* full_bar(int n) const { return &full[n % STAGES]; }
  // Producer, before refilling the stage of use n: the consumers are done with use n - STAGES.
  __device__ __forceinline__ void wait_empty(int n) const {
    if (n >= STAGES)
      mbarrier_wait(&empty[n % STAGES], static_cast<unsigned>((n / STAGES - 1) & 1));
  }
  // Consumer: the stage of use n has landed.
  __device__ __forceinline__ void wait_full(int n) const {
    mbarrier_wait(&full[n % STAGES], static_cast<unsigned>((n / STAGES) & 1));
  }
  // Consumer: done with the stage of use n (its products that read it have retired).
  __device__ __forceinline__ void release(int n) const { mbarrier_arrive(&empty[n % STAGES]); }
};

// Warp specialisation's register split (setmaxnreg): a producer warpgroup that only issues loads
// gives registers back, and the consumer warpgroups take them, so a CTA of 384 threads (168
// registers each at entry, from __launch_bounds__(384, 1)) can run consumers at up to 240. Every
// thread of the warpgroup executes the same one; the counts must keep the CTA within the
// register file (24 + 2 * 240 = 3 * 168). ptxas compiles the code after each for its count.
template <int REGS>
__device__ __forceinline__ void warpgroup_release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

template <int REGS>
__device__ __forceinline__ void warpgroup_claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

}  // namespace
}  // namespace fp8lab::cuda_ops
