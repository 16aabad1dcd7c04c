// The process environment, as fp8lab's library sees it.
//
// The library reads no environment variable itself: a program using it reads the variables it
// honours once, at start, and installs them here (the CLI does so in apps/fp8lab.cpp), so what
// a run depends on is visible in one place and a program embedding the library decides for
// itself. Kernel choices are not here: they are run configuration (fp8lab/kernel_options.hpp).
#pragma once

#include <functional>
#include <string>

namespace fp8lab {

// getenv's shape: the value of a variable, or nullptr when it is unset.
using EnvLookup = std::function<const char*(const char*)>;

struct EnvironmentSettings {
  // FP8LAB_GPT2_VOCAB: the GPT-2 vocabulary's directory; empty: data/cache/gpt2-vocab in the
  // source tree.
  std::string gpt2_vocab_dir;
  // FP8LAB_NCCL_LIBRARY: the NCCL library to load, and no other; empty: libnccl.so.2, then
  // libnccl.so.
  std::string nccl_library;
  // FP8LAB_CUDNN_LIBRARY: the cuDNN library for kernels.attention=cudnn, and no other; empty:
  // libcudnn.so.9, then libcudnn.so.
  std::string cudnn_library;
  // FP8LAB_SOURCE_COMMIT: "<40 hex>" or "<40 hex> dirty", the commit a binary carried to another
  // machine was built from; empty: ask git in the source tree.
  std::string source_commit;
  // FP8LAB_CUDA_SYNC=1: synchronise after every kernel launch, so an asynchronous fault is
  // reported at the launch that caused it (debugging; slow).
  bool cuda_sync_after_launch = false;
};

// The settings from the variables above, as `lookup` returns them.
EnvironmentSettings environment_from(const EnvLookup& lookup);

// Install once, before any other thread starts; the default is every field empty or off.
void install_environment(EnvironmentSettings settings);
const EnvironmentSettings& environment();

}  // namespace fp8lab
