// What the producer-fused amax's per-CTA commit (detail::commit_block_amax) costs a kernel, and
// which part of it: the CTA barrier and shared-memory round, the atomicMax into the meta, the
// fence, the ticket. The model's op tables had shown the producers of an FP8 linear's input
// ~2 ms slower per gpt1.3b step with the amax than without, e.g. add_rmsnorm_forward ~15 us per
// call at 2,048 CTAs (docs/performance.md, "Casts and amax").
//
// Every variant runs the same kernel body: each of 256 threads stores kStoresPerThread 16-byte
// words (a CTA's output tile, so that thread 0 has stores in flight when it commits), then hands
// in a key. Variants differ only in the commit:
//   none        no commit (the bf16 arm)
//   reduce      the CTA's shared-memory max round only (__syncthreads, no global atomics)
//   max-only    the round + one atomicMax per CTA (no fence, no ticket: finalises nothing)
//   ticket-only the round + fence + ticket (no atomicMax)
//   no-fence    the production protocol without its two fences (for attribution only: not a
//               valid protocol, the last CTA may miss a max)
//   read-first  the production protocol, but the atomicMax only when the key exceeds a relaxed
//               read of the accumulator (most CTAs then skip it; the result is the same max)
//   commit      detail::commit_block_amax itself (the production path)
// For each grid size: the median over kLaunches launches of each variant's time, in
// microseconds, and the difference from `none`. Variants run interleaved, launch by launch.
//
// Two occupancies: "many" (the kernel's own: 8 CTAs of 256 threads per SM, like add_rmsnorm),
// and "one per SM" (each CTA also reserves 120 KiB of shared memory, as the attention kernels'
// stage rings do). With one CTA per SM, nothing else on the SM runs while the CTA's thread 0
// waits for its fence and ticket, so the wait is paid in full per CTA.
//
// Build: the `amax_commit_probe` target (CUDA builds). Run on the GPU machine
// (scripts/gpu-session probe); results under bench/results/kernels/.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fp8/amax_device.cuh"

namespace {

constexpr int kThreads = 256;
constexpr int kStoresPerThread = 8;  // 32 KiB per CTA: 8 rows of 2,048 bf16, add_rmsnorm's CTA
constexpr int kLaunches = 41;

enum class Variant { none, reduce, max_only, ticket_only, no_fence, read_first, commit };
constexpr Variant kVariants[] = {Variant::none,        Variant::reduce,   Variant::max_only,
                                 Variant::ticket_only, Variant::no_fence, Variant::read_first,
                                 Variant::commit};

const char* name(Variant v) {
  switch (v) {
    case Variant::none:
      return "none";
    case Variant::reduce:
      return "reduce";
    case Variant::max_only:
      return "max-only";
    case Variant::ticket_only:
      return "ticket-only";
    case Variant::no_fence:
      return "no-fence";
    case Variant::read_first:
      return "read-first";
    case Variant::commit:
      return "commit";
  }
  return "?";
}

// The CTA's max key in thread 0 (the production round: warp max, shared memory, thread 0).
__device__ std::uint32_t block_max(std::uint32_t key) {
  __shared__ std::uint32_t warp_max[kThreads / 32];
  key = __reduce_max_sync(0xFFFFFFFFu, key);
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = key;
  __syncthreads();
  std::uint32_t b = 0;
  if (threadIdx.x == 0)
    for (int w = 0; w < kThreads / 32; ++w) b = max(b, warp_max[w]);
  return b;
}

template <Variant V>
__global__ void __launch_bounds__(kThreads)
    probe_kernel(uint4* out, fp8lab::Fp8Meta* meta, std::uint32_t* sink) {
  const std::uint32_t block = blockIdx.x;
  uint4* tile = out + static_cast<std::size_t>(block) * kThreads * kStoresPerThread;
#pragma unroll
  for (int i = 0; i < kStoresPerThread; ++i)
    tile[i * kThreads + threadIdx.x] = make_uint4(block, threadIdx.x, i, 0);
  // Keys that grow with the block index for a few blocks, then stay: as activations do, the
  // running max is reached early and most CTAs' maxima do not raise it.
  const std::uint32_t key = 0x3F800000u + (min(block, 64u) << 8) + threadIdx.x;
  const unsigned blocks = gridDim.x;
  if constexpr (V == Variant::none) {
    return;
  } else if constexpr (V == Variant::commit) {
    fp8lab::detail::commit_block_amax(key, meta, fp8lab::Fp8Format::e4m3, blocks);
  } else {
    const std::uint32_t b = block_max(key);
    if (threadIdx.x != 0) return;
    if constexpr (V == Variant::reduce) {
      if (b == 0xFFFFFFFFu) *sink = b;  // never: keeps the round from being optimised away
    } else if constexpr (V == Variant::max_only) {
      atomicMax(&meta->amax_bits_accum, b);
    } else {
      if constexpr (V == Variant::no_fence) {
        atomicMax(&meta->amax_bits_accum, b);
      } else if constexpr (V == Variant::read_first) {
        const auto* accum = reinterpret_cast<volatile std::uint32_t*>(&meta->amax_bits_accum);
        const std::uint32_t seen = *accum;
        if (b > seen) atomicMax(&meta->amax_bits_accum, b);
        __threadfence();
      } else {  // ticket_only
        __threadfence();
      }
      if (atomicAdd(&meta->blocks_done, 1u) != blocks - 1) return;
      if constexpr (V != Variant::no_fence) __threadfence();
      fp8lab::detail::finalize_amax(meta, fp8lab::Fp8Format::e4m3);
    }
  }
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "amax_commit_probe: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

constexpr int kOnePerSmSmem = 120 * 1024;  // two do not fit in an SM's 228 KiB

template <Variant V>
void launch_variant(int blocks, int smem, uint4* out, fp8lab::Fp8Meta* meta, std::uint32_t* sink) {
  static bool opted_in = false;  // the dynamic shared memory beyond 48 KiB needs an opt-in
  if (!opted_in) {
    check(cudaFuncSetAttribute(probe_kernel<V>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               kOnePerSmSmem),
          "opt-in to 120 KiB of shared memory");
    opted_in = true;
  }
  probe_kernel<V><<<blocks, kThreads, static_cast<std::size_t>(smem)>>>(out, meta, sink);
}

void launch(Variant v, int blocks, int smem, uint4* out, fp8lab::Fp8Meta* meta,
            std::uint32_t* sink) {
  switch (v) {
    case Variant::none:
      launch_variant<Variant::none>(blocks, smem, out, meta, sink);
      break;
    case Variant::reduce:
      launch_variant<Variant::reduce>(blocks, smem, out, meta, sink);
      break;
    case Variant::max_only:
      launch_variant<Variant::max_only>(blocks, smem, out, meta, sink);
      break;
    case Variant::ticket_only:
      launch_variant<Variant::ticket_only>(blocks, smem, out, meta, sink);
      break;
    case Variant::no_fence:
      launch_variant<Variant::no_fence>(blocks, smem, out, meta, sink);
      break;
    case Variant::read_first:
      launch_variant<Variant::read_first>(blocks, smem, out, meta, sink);
      break;
    case Variant::commit:
      launch_variant<Variant::commit>(blocks, smem, out, meta, sink);
      break;
  }
}

}  // namespace

int main() {
  constexpr int kGrids[] = {528, 1056, 2048, 4096, 16384};
  constexpr int kMaxBlocks = 16384;
  uint4* out = nullptr;
  fp8lab::Fp8Meta* meta = nullptr;
  std::uint32_t* sink = nullptr;
  check(cudaMalloc(&out, sizeof(uint4) * kThreads * kStoresPerThread * kMaxBlocks), "out");
  check(cudaMalloc(&meta, sizeof(fp8lab::Fp8Meta)), "meta");
  check(cudaMalloc(&sink, sizeof(std::uint32_t)), "sink");
  check(cudaMemset(meta, 0, sizeof(fp8lab::Fp8Meta)), "meta zero");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  std::printf(
      "amax_commit_probe: %s, %d SMs; %d threads per CTA, %d KiB stored per CTA, "
      "median of %d launches (variants interleaved)\n",
      prop.name, prop.multiProcessorCount, kThreads, kThreads * kStoresPerThread * 16 / 1024,
      kLaunches);
  std::printf(
      "| CTAs per SM | CTAs | variant | us per launch | vs none (us) | vs none per CTA (ns) |\n");
  std::printf("|---|---:|---|---:|---:|---:|\n");
  for (const int smem : {0, kOnePerSmSmem})
    for (const int blocks : kGrids) {
      constexpr int kN = sizeof(kVariants) / sizeof(kVariants[0]);
      std::vector<std::vector<float>> ms(kN);
      for (int rep = -3; rep < kLaunches; ++rep) {  // 3 warm-up rounds
        for (int k = 0; k < kN; ++k) {
          check(cudaEventRecord(start), "record");
          launch(kVariants[k], blocks, smem, out, meta, sink);
          check(cudaEventRecord(stop), "record");
          check(cudaEventSynchronize(stop), "sync");
          float t = 0.f;
          check(cudaEventElapsedTime(&t, start, stop), "elapsed");
          if (rep >= 0) ms[k].push_back(t);
        }
      }
      check(cudaGetLastError(), "launch");
      double none_us = 0;
      for (int k = 0; k < kN; ++k) {
        std::vector<float>& v = ms[k];
        std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
        const double us = 1000.0 * v[v.size() / 2];
        if (kVariants[k] == Variant::none) none_us = us;
        std::printf("| %s | %d | %s | %.2f | %+.2f | %+.1f |\n", smem ? "one" : "many", blocks,
                    name(kVariants[k]), us, us - none_us, 1000.0 * (us - none_us) / blocks);
      }
    }
  fp8lab::Fp8Meta host{};
  check(cudaMemcpy(&host, meta, sizeof(host), cudaMemcpyDeviceToHost), "meta back");
  // The last finalising launch was `commit`'s: its amax is the largest key's value.
  std::printf("last amax %g (blocks_done %u, accum %u: both 0 after a finalise)\n", host.amax,
              host.blocks_done, host.amax_bits_accum);
  return 0;
}
