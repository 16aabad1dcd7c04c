// What the producer-fused amax costs each producer op on its own, away from the model's other
// ops (docs/performance.md, "Casts and amax"). In gpt1.3b's op tables
// the FP8 arm's producers ran ~2 ms per step slower with their amax slots than without, and
// the neighbouring ops (the side stream's W casts, L2 contents) could not be told apart from
// the amax itself. Here each op runs alone on the CUDA backend, at a preset's shapes, with an
// AmaxSlot and without, alternating call by call; each call is timed by CUDA events on the
// backend's stream. Prints the median of kRounds calls of each, and the difference. The slot
// runs both protocols: finalised by the producer (a ticket per CTA) and deferred
// (AmaxSlot::deferred: the keys only; the slot is not zeroed between calls, which changes
// nothing about the time). AdamW's slot is the working copy's: an FP8 linear's W amax.
//
// Build: the `producer_amax_probe` target (CUDA builds). Run on the GPU machine
// (scripts/gpu-session probe); results under bench/results/kernels/.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "fp8lab/backend.hpp"
#include "core/cuda_check.hpp"
#include "fp8lab/fp8_cuda.hpp"
#include "fp8lab/fp8_format.hpp"
#include "cuda_backend/cuda_backend.hpp"

namespace fp8lab {
namespace {

constexpr int kRounds = 25;
constexpr int kWarmup = 3;

struct Preset {
  const char* name;
  std::int64_t batch, seq, dim, heads;
};

// Random values of `dtype` (bf16 or f32) with standard deviation `sd`, uploaded.
Buffer random_tensor(Backend& gpu, DType dtype, const Shape& shape, float sd, unsigned seed) {
  Buffer b = gpu.allocate(MemoryKind::activations, dtype, shape, "probe tensor");
  const std::int64_t n = b.view().numel();
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, sd);
  if (dtype == DType::f32) {
    std::vector<float> host(static_cast<std::size_t>(n));
    for (float& v : host) v = normal(rng);
    gpu.upload(b.view(), host.data());
  } else {
    std::vector<std::uint16_t> host(static_cast<std::size_t>(n));
    for (std::uint16_t& v : host) v = float_to_bf16(normal(rng));
    gpu.upload(b.view(), host.data());
  }
  return b;
}

Buffer empty_tensor(Backend& gpu, DType dtype, const Shape& shape) {
  return gpu.allocate(MemoryKind::activations, dtype, shape, "probe output");
}

float median(std::vector<float> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// One op: the median ms of `run(slot)` with an empty slot, with `slot` finalised by the
// producer and with it deferred, calls alternating.
void time_op(cuda::CudaBackend& gpu, const Preset& p, const char* op, AmaxSlot slot,
             const std::function<void(AmaxSlot)>& run) {
  cudaEvent_t start, stop;
  FP8LAB_CUDA_CHECK(cudaEventCreate(&start));
  FP8LAB_CUDA_CHECK(cudaEventCreate(&stop));
  AmaxSlot deferred = slot;
  deferred.deferred = true;
  const AmaxSlot arms[] = {AmaxSlot{}, slot, deferred};
  std::vector<float> ms[3];
  for (int round = -kWarmup; round < kRounds; ++round) {
    for (int arm = 0; arm < 3; ++arm) {
      FP8LAB_CUDA_CHECK(cudaEventRecord(start, gpu.stream()));
      run(arms[arm]);
      FP8LAB_CUDA_CHECK(cudaEventRecord(stop, gpu.stream()));
      FP8LAB_CUDA_CHECK(cudaEventSynchronize(stop));
      float t = 0.f;
      FP8LAB_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
      if (round >= 0) ms[arm].push_back(t);
    }
  }
  gpu.synchronize();  // and the backend's own error flags
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  const float a = median(ms[0]), b = median(ms[1]), c = median(ms[2]);
  std::printf("| %s | %s | %.1f | %.1f | %+.1f%% | %.1f | %+.1f%% |\n", p.name, op, 1000.f * a,
              1000.f * b, 100.f * (b - a) / a, 1000.f * c, 100.f * (c - a) / a);
}

void probe_preset(cuda::CudaBackend& gpu, const Preset& p) {
  const std::int64_t m = p.batch * p.seq, d = p.dim, h = p.heads, t = p.seq;
  const Buffer slots = allocate_amax_slots(gpu, 2, MemoryKind::workspace, "probe slots");
  const AmaxSlot x_slot = amax_slot(slots, 0, Fp8Format::e4m3);
  const AmaxSlot dy_slot = amax_slot(slots, 1, Fp8Format::e5m2);
  constexpr float eps = 1e-5f;

  {  // the norms: residual stream f32, branch and outputs bf16
    const Buffer x = random_tensor(gpu, DType::f32, {m, d}, 1.f, 1);
    const Buffer branch = random_tensor(gpu, DType::bf16, {m, d}, 1.f, 2);
    const Buffer w = random_tensor(gpu, DType::f32, {d}, 1.f, 3);
    const Buffer dy = random_tensor(gpu, DType::bf16, {m, d}, 1.f, 4);
    const Buffer sum = empty_tensor(gpu, DType::f32, {m, d});
    const Buffer y = empty_tensor(gpu, DType::bf16, {m, d});
    const Buffer rstd = empty_tensor(gpu, DType::f32, {m});
    const Buffer dx = empty_tensor(gpu, DType::f32, {m, d});
    const Buffer dw = empty_tensor(gpu, DType::f32, {d});
    const Buffer copy = empty_tensor(gpu, DType::bf16, {m, d});
    gpu.fill_zero(dx);
    gpu.fill_zero(dw);
    time_op(gpu, p, "add_rmsnorm_forward", x_slot,
            [&](AmaxSlot s) { gpu.add_rmsnorm_forward(x, branch, sum, w, eps, y, rstd, s); });
    time_op(gpu, p, "rmsnorm_backward_and_convert", dy_slot, [&](AmaxSlot s) {
      gpu.rmsnorm_backward_and_convert(sum, w, rstd, dy, dx, dw, copy, s);
    });
  }
  {  // the MLP's GELU, [M, 4D] (the FP8 arms run it as its own op)
    const Buffer pre = random_tensor(gpu, DType::bf16, {m, 4 * d}, 1.f, 5);
    const Buffer dy = random_tensor(gpu, DType::bf16, {m, 4 * d}, 1.f, 6);
    const Buffer y = empty_tensor(gpu, DType::bf16, {m, 4 * d});
    const Buffer dx = empty_tensor(gpu, DType::bf16, {m, 4 * d});
    time_op(gpu, p, "gelu_forward", x_slot, [&](AmaxSlot s) { gpu.gelu_forward(pre, y, s); });
    time_op(gpu, p, "gelu_backward", dy_slot,
            [&](AmaxSlot s) { gpu.gelu_backward(pre, dy, dx, s); });
  }
  {  // the attention, with the model's kernels (the defaults of FP8LAB_ATTENTION_FWD/BWD)
    const Buffer qkv = random_tensor(gpu, DType::bf16, {m, 3 * d}, 1.f, 7);
    const Buffer dout = random_tensor(gpu, DType::bf16, {m, d}, 1.f, 8);
    const Buffer out = empty_tensor(gpu, DType::bf16, {m, d});
    const Buffer lse = empty_tensor(gpu, DType::f32, {p.batch * h * t});
    const Buffer dqkv = empty_tensor(gpu, DType::bf16, {m, 3 * d});
    const int heads = static_cast<int>(h), seq = static_cast<int>(t);
    time_op(gpu, p, "attention_forward", x_slot,
            [&](AmaxSlot s) { gpu.attention_forward(qkv, heads, seq, out, lse, s); });
    time_op(gpu, p, "attention_backward", dy_slot,
            [&](AmaxSlot s) { gpu.attention_backward(qkv, out, lse, dout, heads, seq, dqkv, s); });
  }
  {  // AdamW on one MLP weight [4D, D] writing its bf16 working copy, whose amax is the FP8 W's
     // (deferred); the weights drift by 1e-6 a call, which changes nothing about the time
    const Buffer param = random_tensor(gpu, DType::f32, {4 * d, d}, 0.02f, 9);
    const Buffer grad = random_tensor(gpu, DType::f32, {4 * d, d}, 1e-3f, 10);
    const Buffer mom = empty_tensor(gpu, DType::f32, {4 * d, d});
    const Buffer var = empty_tensor(gpu, DType::f32, {4 * d, d});
    const Buffer working = empty_tensor(gpu, DType::bf16, {4 * d, d});
    gpu.fill_zero(mom);
    gpu.fill_zero(var);
    AdamWStep step;
    step.lr = 1e-6f, step.weight_decay = 0.1f;
    time_op(gpu, p, "adamw_update [4D, D]", x_slot,
            [&](AmaxSlot s) { gpu.adamw_update(param, grad, mom, var, step, working, s); });
  }
  // The consumers: an FP8 linear's cast of both layouts, with its own amax pass (no slot) or
  // the scale from a filled slot, finalised or keys only. mlp.proj's x [M, 4D] (e4m3) and
  // qkv's dY [M, 3D] (e5m2); each moves 4 bytes per element (bf16 in, two FP8 layouts out).
  // The next two cross shape and format (they located a race in this probe, fixed below).
  for (const auto& [what, cols, format] :
       {std::tuple{"cast both layouts, x [M, 4D]", 4 * d, Fp8Format::e4m3},
        std::tuple{"cast both layouts, dY [M, 3D]", 3 * d, Fp8Format::e5m2},
        std::tuple{"cast both layouts, [M, 4D] e5m2", 4 * d, Fp8Format::e5m2},
        std::tuple{"cast both layouts, [M, 3D] e4m3", 3 * d, Fp8Format::e4m3},
        // The model's three [M, D] casts per block (qkv's, attn.proj's and fc's x): in the
        // model the casts moved 3.1 TB/s against the larger ones' 3.6 alone.
        std::tuple{"cast both layouts, x [M, D]", d, Fp8Format::e4m3}}) {
    const Buffer x = random_tensor(gpu, DType::bf16, {m, cols}, 1.f, 11);
    const Buffer q = empty_tensor(gpu, fp8_dtype(format), {m, cols});
    const Buffer qt = empty_tensor(gpu, fp8_dtype(format), {cols, m});
    const Buffer metas = allocate_amax_slots(gpu, 2, MemoryKind::workspace, "probe cast metas");
    auto* meta = static_cast<Fp8Meta*>(metas.view().data);
    const AmaxSlot filled = {meta + 1, format};
    gpu.convert(x, x, filled);  // the slot of x as its producer leaves it (same bits again)
    // The copies below run on the legacy stream, the convert on the backend's non-blocking one:
    // without this wait the keys were read (and written back) before the convert's ticket had
    // finalised the slot, so the deferred arm cast with keys 0, i.e. scale 1 (every warp of an
    // e4m3 cast then counted an underflow, +8-18%).
    gpu.synchronize();
    std::uint32_t keys = 0;  // the finalised amax's bits, for the deferred arm
    FP8LAB_CUDA_CHECK(cudaMemcpy(&keys, &meta[1].amax, sizeof(keys), cudaMemcpyDeviceToHost));
    FP8LAB_CUDA_CHECK(
        cudaMemcpy(&meta[1].amax_bits_accum, &keys, sizeof(keys), cudaMemcpyHostToDevice));
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());  // a pageable copy may return before it lands
    FP8LAB_CHECK(keys != 0u, "producer_amax_probe: the slot of {} has no amax", what);
    time_op(gpu, p, what, filled, [&](AmaxSlot s) {
      if (!s) amax_scale_cuda(x, format, meta, gpu.stream());
      quantize_transpose_cuda(x, format, meta, q, qt, gpu.stream(),
                              {.given = s.meta, .given_deferred = s.deferred});
    });
  }
}

}  // namespace
}  // namespace fp8lab

int main() {
  using namespace fp8lab;
  auto backend = make_cuda_backend();
  auto* gpu = dynamic_cast<cuda::CudaBackend*>(backend.get());
  if (gpu == nullptr) {
    std::fprintf(stderr, "producer_amax_probe: no CUDA backend\n");
    return 1;
  }
  std::printf(
      "producer_amax_probe: each op alone, without its amax slot, with it finalised by "
      "the producer and with it deferred, alternating; median of %d calls each (us)\n",
      kRounds);
  std::printf("| preset | op | no slot | finalised | vs no slot | deferred | vs no slot |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|\n");
  for (const Preset& p : {Preset{"gpt1.3b", 8, 2048, 2048, 16}, Preset{"gpt50m", 64, 2048, 512, 8}})
    probe_preset(*gpu, p);
  return 0;
}
