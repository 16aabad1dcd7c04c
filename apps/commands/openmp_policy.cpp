// The CPU commands' OpenMP wait policy (openmp_policy.hpp).
#include "openmp_policy.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fp8lab::cli {

// Measured on the shared 2-core machine, tiny preset training: 558 tokens/s spinning, 6320
// tokens/s passive.
void ensure_passive_openmp() {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (std::size_t start = 0; start < all.size();) {
    const std::size_t end = all.find('\0', start);
    args.push_back(all.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (args.empty()) return;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::setenv("OMP_WAIT_POLICY", "passive", 1);
  std::fflush(nullptr);
  ::execv("/proc/self/exe", argv.data());
}

}  // namespace fp8lab::cli
