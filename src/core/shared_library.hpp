// Opening a shared library that fp8lab does not link (NCCL, cuDNN, NVML): the user's file alone
// when a setting names one (no silent fallback to another copy), else the usual sonames in order.
#pragma once

#include <string>
#include <vector>

namespace fp8lab {

struct OpenedLibrary {
  void* handle = nullptr;  // dlopen's handle; null when no candidate loaded
  // Each candidate tried before the one that loaded (all of them when none did), with dlerror's
  // reason: "\n  libnccl.so.2: libnccl.so.2: cannot open shared object file: ...".
  std::string tried;
};

// The names to try: {forced} when it is not empty, else `defaults`.
std::vector<std::string> library_candidates(const std::string& forced,
                                            std::vector<std::string> defaults);

// dlopen()s the candidates in order with `flags` (RTLD_NOW | RTLD_LOCAL, ...) until one loads.
OpenedLibrary open_first_library(const std::vector<std::string>& candidates, int flags);

}  // namespace fp8lab
