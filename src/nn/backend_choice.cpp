// choose_backend (fp8lab/backend.hpp): what "--backend auto" resolves to, and why.
//
// auto asks the same question the CUDA backend asks when it starts (cuda_available: a device
// that runs the sm_90a kernels), so a machine where auto picks "cuda" is one where the CUDA
// backend starts, and any other machine gets the CPU backend with the reason in the first line.
#include "fp8lab/backend.hpp"
#include "fp8lab/error.hpp"

#if defined(FP8LAB_HAVE_CUDA)
#include "core/cuda_check.hpp"
#endif

namespace fp8lab {
namespace {

// Empty when the CUDA backend can start here, else why not.
std::string why_no_cuda() {
#if defined(FP8LAB_HAVE_CUDA)
  std::string why;
  return cuda_available(&why) ? std::string() : why;
#else
  return "this fp8lab was built without CUDA";
#endif
}

}  // namespace

BackendChoice choose_backend(std::string_view requested) {
  if (requested == "cpu" || requested == "cuda") return {std::string(requested), "asked for"};
  FP8LAB_CHECK(requested == "auto", "unknown backend '{}' (available: auto, cpu, cuda)", requested);
  const std::string why_not = why_no_cuda();
  if (why_not.empty()) return {"cuda", "auto: a usable CUDA GPU"};
  return {"cpu", "auto: " + why_not};
}

std::string BackendChoice::line(std::string_view command) const {
  return fmt::format("fp8lab {}: backend {} ({})", command, name, reason);
}

}  // namespace fp8lab
