#include "core/shared_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <utility>

namespace fp8lab {

std::vector<std::string> library_candidates(const std::string& forced,
                                            std::vector<std::string> defaults) {
  if (!forced.empty()) return {forced};
  return defaults;
}

OpenedLibrary open_first_library(const std::vector<std::string>& candidates, int flags) {
  OpenedLibrary out;
  for (const std::string& name : candidates) {
    out.handle = ::dlopen(name.c_str(), flags);
    if (out.handle != nullptr) break;
    const char* why = ::dlerror();
    out.tried += fmt::format("\n  {}: {}", name, why != nullptr ? why : "not found");
  }
  return out;
}

}  // namespace fp8lab
