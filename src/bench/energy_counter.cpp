// NVML's energy counter through dlopen (see energy_counter.hpp). The few NVML entry points are
// declared here by their C signatures (nvmlReturn_t is an int, 0 = success; nvmlDevice_t an
// opaque pointer), so nvml.h is not needed to build.
#include "bench/energy_counter.hpp"

#include "core/shared_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

namespace fp8lab::bench {
namespace {

using InitFn = int (*)();
using HandleByBusIdFn = int (*)(const char*, void**);
using ErrorStringFn = const char* (*)(int);

}  // namespace

GpuEnergyCounter::GpuEnergyCounter(const std::string& pci_bus_id, const std::string& library)
    : bus_id_(pci_bus_id) {
  const OpenedLibrary lib = open_first_library({library}, RTLD_NOW | RTLD_LOCAL);
  library_ = lib.handle;
  if (library_ == nullptr) {
    why_not_ = fmt::format("cannot load NVML:{}", lib.tried);
    return;
  }
  auto init = reinterpret_cast<InitFn>(::dlsym(library_, "nvmlInit_v2"));
  auto by_bus =
      reinterpret_cast<HandleByBusIdFn>(::dlsym(library_, "nvmlDeviceGetHandleByPciBusId_v2"));
  auto error_string = reinterpret_cast<ErrorStringFn>(::dlsym(library_, "nvmlErrorString"));
  read_ = reinterpret_cast<int (*)(void*, unsigned long long*)>(
      ::dlsym(library_, "nvmlDeviceGetTotalEnergyConsumption"));
  shutdown_ = reinterpret_cast<int (*)()>(::dlsym(library_, "nvmlShutdown"));
  if (!init || !by_bus || !error_string || !read_ || !shutdown_) {
    why_not_ = fmt::format("{} lacks the NVML entry points fp8lab reads (too old?)", library);
    shutdown_ = nullptr;
    return;
  }
  if (const int rc = init(); rc != 0) {
    why_not_ = fmt::format("nvmlInit failed: {} ({})", error_string(rc), rc);
    shutdown_ = nullptr;
    return;
  }
  void* device = nullptr;
  if (const int rc = by_bus(pci_bus_id.c_str(), &device); rc != 0) {
    why_not_ = fmt::format("NVML has no GPU at PCI bus id '{}': {} ({})", pci_bus_id,
                           error_string(rc), rc);
    return;
  }
  unsigned long long mj = 0;
  if (const int rc = read_(device, &mj); rc != 0) {
    why_not_ = fmt::format("the GPU at '{}' has no energy counter: {} ({})", pci_bus_id,
                           error_string(rc), rc);
    return;
  }
  device_ = device;
}

GpuEnergyCounter::~GpuEnergyCounter() {
  if (shutdown_ != nullptr) shutdown_();
  if (library_ != nullptr) ::dlclose(library_);
}

std::string GpuEnergyCounter::describe() const {
  return fmt::format("NVML total energy of GPU {}", bus_id_);
}

std::optional<double> GpuEnergyCounter::joules() const {
  if (device_ == nullptr) return std::nullopt;
  unsigned long long mj = 0;
  if (read_(device_, &mj) != 0) return std::nullopt;
  return static_cast<double>(mj) * 1e-3;
}

}  // namespace fp8lab::bench
