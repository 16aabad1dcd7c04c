// The GPU's cumulative energy counter, for energy per training step in `fp8lab bench model`.
//
// Why: on the H200 every arm of the training step, ours and PyTorch's, runs at the board's
// power limit, its SM clock ~20% under the maximum (docs/performance.md, "How the numbers are
// taken"). Speed there is work per joule, so an arm's energy per step says what a change
// saved even where the power cap turns part of the saving back into clock.
//
// The counter is NVML's total energy since the driver loaded (millijoules, Volta and later).
// On the H200 it moves only every ~100 ms, so two reads around a window of ~1 s are off by up
// to ~±9%: a window's energy comes from bench/energy_sampler.hpp, which polls this counter.
// libnvidia-ml is loaded at run time (dlopen), like NCCL: fp8lab needs no NVML to build, and a
// machine without it (CPU runs, CI) gets an unavailable counter that says why.
#pragma once

#include <optional>
#include <string>

namespace fp8lab::bench {

class GpuEnergyCounter {
 public:
  // Loads `library`, initialises NVML and finds the GPU with this PCI bus id (as
  // cudaDeviceGetPCIBusId writes it, e.g. "0000:3B:00.0"). On failure the counter is
  // unavailable and why_not() names the step that failed and NVML's or dlopen's reason.
  explicit GpuEnergyCounter(const std::string& pci_bus_id,
                            const std::string& library = "libnvidia-ml.so.1");
  ~GpuEnergyCounter();
  GpuEnergyCounter(const GpuEnergyCounter&) = delete;
  GpuEnergyCounter& operator=(const GpuEnergyCounter&) = delete;

  bool available() const { return device_ != nullptr; }
  const std::string& why_not() const { return why_not_; }
  // "NVML total energy of GPU <bus id>"
  std::string describe() const;
  // The counter now, in joules; nullopt when unavailable or when the read fails.
  std::optional<double> joules() const;

 private:
  std::string bus_id_;
  std::string why_not_;
  void* library_ = nullptr;                            // dlopen handle
  void* device_ = nullptr;                             // nvmlDevice_t
  int (*read_)(void*, unsigned long long*) = nullptr;  // nvmlDeviceGetTotalEnergyConsumption
  int (*shutdown_)() = nullptr;                        // nvmlShutdown
};

}  // namespace fp8lab::bench
