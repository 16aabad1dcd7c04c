// Which CUDA host calls an NVML energy poller slows down, and by how much.
//
// Why: `fp8lab bench model` with its energy sampler on (bench/energy_sampler.hpp: a thread
// reading NVML's total-energy counter back to back, ~4 ms a read) timed the gpt50m blockwise
// arm at 710 ms a step against 123 ms with --no-energy, while the tensorwise and bf16 arms were
// not slowed (docs/performance.md, "FP8 scaling recipes"). The grouped recipes' casts are what
// those arms add on the host: a cudaMemsetAsync of the cast's meta before each cast kernel
// (src/fp8/grouped_cast_cuda.cpp). Prediction: cudaMemsetAsync waits for the NVML read in
// flight while kernel launches and event calls do not; 48 memsets a gpt50m fp8-mlp step (three
// casts a linear) at ~12 ms would be the 590 ms. Against it: the tensorwise path memsets too
// (one a linear), and its arms were not slowed; so the FP8 GEMMs of each scale mode (tensor,
// cuBLASLt's OUTER_VEC and VEC128 x BLK128x128, which only the grouped recipes use) are timed
// the same way.
//
// For each host call, kCalls calls are queued on one stream and the host time of the loop is
// taken (the stream synchronised after, outside the time), kRounds rounds with the poller off
// and on in turn; the median per call in microseconds, and on/off. Then "waits": one call's host
// time right after a kernel that keeps the GPU busy for kSpinUs, poller off: a call that takes
// about kSpinUs waits for the queued work, which would also drain the trainer's queue (the
// blockwise arm trains at 0.95x bf16 while its op times match tensorwise's). The NVML read time
// itself is printed too, idle and with the GPU busy.
//
// Build: the `nvml_contention_probe` target (this file and nvml_contention_kernel.cu; CUDA
// builds with -DFP8LAB_PROBES=ON). Run on the GPU machine: `scripts/gpu-session probe` with
// PROBES=nvml_contention_probe.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/energy_counter.hpp"
#include "core/cuda_memory.hpp"
#include "gemm/gemm_cuda.hpp"

// bench/probes/nvml_contention_kernel.cu: an empty kernel's launch (nvcc compiles the kernel;
// fmt, which the fp8lab headers here bring in, does not build under nvcc's relaxed constexpr).
void launch_empty_kernel(int blocks, int threads, float* target, cudaStream_t stream);
void launch_spin_kernel(unsigned long long ns, cudaStream_t stream);

namespace {

constexpr int kCalls = 200;
constexpr int kRounds = 7;
constexpr double kSpinUs = 2000.0;

bool ok(cudaError_t rc, const char* what) {
  if (rc == cudaSuccess) return true;
  std::printf("%s failed: %s\n", what, cudaGetErrorString(rc));
  return false;
}

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Reads the counter back to back on its own thread while it lives (as the bench's sampler does),
// and keeps each read's duration.
class Poller {
 public:
  explicit Poller(const fp8lab::bench::GpuEnergyCounter& counter)
      : thread_([this, &counter] {
          while (!stop_) {
            const double t0 = now_us();
            if (!counter.joules()) break;
            reads_.push_back(now_us() - t0);
          }
        }) {}
  ~Poller() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  double median_read_us() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return reads_.empty() ? 0.0 : median(reads_);
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<double> reads_;
  std::thread thread_;
};

struct HostCall {
  const char* name;
  std::function<cudaError_t()> call;
};

}  // namespace

int main() {
  int device = 0;
  if (!ok(cudaSetDevice(device), "cudaSetDevice")) return 1;
  char bus_id[32] = {};
  if (!ok(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device), "cudaDeviceGetPCIBusId")) return 1;
  const fp8lab::bench::GpuEnergyCounter counter(bus_id);
  if (!counter.available()) {
    std::printf("no energy counter: %s\n", counter.why_not().c_str());
    return 1;
  }
  cudaStream_t stream = nullptr;
  if (!ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate")) return 1;
  void* pooled = nullptr;  // the backend's memory comes from the stream-ordered pool
  void* plain = nullptr;
  void* plain2 = nullptr;
  if (!ok(cudaMallocAsync(&pooled, 1 << 20, stream), "cudaMallocAsync") ||
      !ok(cudaMalloc(&plain, 1 << 20), "cudaMalloc") ||
      !ok(cudaMalloc(&plain2, 1 << 20), "cudaMalloc") ||
      !ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize"))
    return 1;
  cudaEvent_t event = nullptr;
  if (!ok(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate")) return 1;
  float* target = static_cast<float*>(plain);

  // FP8 GEMMs at a small shape (host time is the question), one per scale mode: the operands'
  // codes are zero bytes and every scale 1, so the values do not matter.
  constexpr std::int64_t kDim = 256;
  using fp8lab::ScaleMode;
  const fp8lab::DeviceTensor qa(fp8lab::DType::e4m3, {kDim, kDim}),
      qb(fp8lab::DType::e4m3, {kDim, kDim});
  const fp8lab::DeviceTensor scales(fp8lab::DType::f32, {kDim * kDim});
  fp8lab::DeviceTensor out(fp8lab::DType::bf16, {kDim, kDim});
  const std::vector<float> ones(kDim * kDim, 1.0f);
  if (!ok(cudaMemset(qa.view().data, 0, qa.view().nbytes()), "cudaMemset") ||
      !ok(cudaMemset(qb.view().data, 0, qb.view().nbytes()), "cudaMemset") ||
      !ok(cudaMemcpy(scales.view().data, ones.data(), ones.size() * sizeof(float),
                     cudaMemcpyHostToDevice),
          "cudaMemcpy"))
    return 1;
  fp8lab::CublasLtGemm gemm;
  const float* ones_dev = scales.view().as<const float>();
  auto fp8_gemm = [&](ScaleMode ma, ScaleMode mb) {
    try {  // an fp8lab::Error (a scale mode this cuBLASLt lacks, say) ends the probe, said
      gemm.matmul({qa.view(), true, ones_dev, ma}, {qb.view(), true, ones_dev, mb}, out.view(), {},
                  stream);
    } catch (const std::exception& e) {
      std::printf("%s\n", e.what());
      return cudaErrorNotSupported;
    }
    return cudaGetLastError();
  };

  const std::vector<HostCall> calls = {
      {"kernel launch",
       [&] {
         launch_empty_kernel(1, 32, target, stream);
         return cudaGetLastError();
       }},
      {"cudaMemsetAsync 32 B, pool", [&] { return cudaMemsetAsync(pooled, 0, 32, stream); }},
      {"cudaMemsetAsync 32 B, cudaMalloc", [&] { return cudaMemsetAsync(plain, 0, 32, stream); }},
      {"cudaMemsetAsync 64 KiB, pool", [&] { return cudaMemsetAsync(pooled, 0, 65536, stream); }},
      {"cudaMemcpyAsync 32 B D2D",
       [&] { return cudaMemcpyAsync(plain2, plain, 32, cudaMemcpyDeviceToDevice, stream); }},
      {"cudaEventRecord + StreamWaitEvent",
       [&] {
         const cudaError_t rc = cudaEventRecord(event, stream);
         return rc != cudaSuccess ? rc : cudaStreamWaitEvent(stream, event, 0);
       }},
      {"cudaGetLastError", [&] { return cudaGetLastError(); }},
      {"FP8 GEMM, tensor x tensor", [&] { return fp8_gemm(ScaleMode::tensor, ScaleMode::tensor); }},
      {"FP8 GEMM, row x row (OUTER_VEC)", [&] { return fp8_gemm(ScaleMode::row, ScaleMode::row); }},
      {"FP8 GEMM, vec128 x block128",
       [&] { return fp8_gemm(ScaleMode::vec128, ScaleMode::block128); }},
  };
  for (const HostCall& c : calls) {  // first calls build the GEMM plans: outside the timing
    if (!ok(c.call(), c.name)) return 1;
  }
  if (!ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize")) return 1;

  // Per call kind, per state (0 off, 1 on): the per-call host time of each round.
  std::vector<std::vector<double>> off(calls.size()), on(calls.size());
  double read_idle_us = 0.0;
  {
    Poller idle(counter);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    read_idle_us = idle.median_read_us();
  }
  for (int round = 0; round < kRounds; ++round) {
    for (int state = 0; state < 2; ++state) {
      std::unique_ptr<Poller> poller;
      if (state == 1) {
        poller = std::make_unique<Poller>(counter);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a read in flight
      }
      for (std::size_t c = 0; c < calls.size(); ++c) {
        const double t0 = now_us();
        for (int i = 0; i < kCalls; ++i) {
          if (!ok(calls[c].call(), calls[c].name)) return 1;
        }
        const double per_call = (now_us() - t0) / kCalls;
        if (!ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize")) return 1;
        (state == 0 ? off : on)[c].push_back(per_call);
      }
    }
  }
  std::vector<std::vector<double>> waits(calls.size());
  for (int round = 0; round < kRounds; ++round) {
    for (std::size_t c = 0; c < calls.size(); ++c) {
      launch_spin_kernel(static_cast<unsigned long long>(kSpinUs * 1e3), stream);
      const double t0 = now_us();
      if (!ok(calls[c].call(), calls[c].name)) return 1;
      waits[c].push_back(now_us() - t0);
      if (!ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize")) return 1;
    }
  }
  double read_busy_us = 0.0;
  {  // reads while the GPU runs kernels back to back
    Poller busy(counter);
    const double end = now_us() + 300e3;
    while (now_us() < end) {
      for (int i = 0; i < 64; ++i) launch_empty_kernel(1024, 256, target, stream);
      if (!ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize")) return 1;
    }
    read_busy_us = busy.median_read_us();
  }

  std::printf("NVML total-energy read (%s): median %.0f us idle, %.0f us with kernels running\n",
              counter.describe().c_str(), read_idle_us, read_busy_us);
  std::printf(
      "host time per call, median of %d rounds of %d calls (poller off / on), and one\n"
      "call's host time after a %.0f us kernel (waits):\n",
      kRounds, kCalls, kSpinUs);
  std::printf("| call | off us | on us | on/off | waits us |\n|---|---:|---:|---:|---:|\n");
  for (std::size_t c = 0; c < calls.size(); ++c) {
    const double a = median(off[c]), b = median(on[c]);
    std::printf("| %s | %.2f | %.2f | %.1fx | %.1f |\n", calls[c].name, a, b, a > 0 ? b / a : 0.0,
                median(waits[c]));
  }
  cudaEventDestroy(event);
  cudaFreeAsync(pooled, stream);
  cudaStreamSynchronize(stream);
  cudaFree(plain);
  cudaFree(plain2);
  cudaStreamDestroy(stream);
  return 0;
}
