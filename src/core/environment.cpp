// The process environment as the library sees it (fp8lab/environment.hpp).
#include "fp8lab/environment.hpp"

#include <string_view>
#include <utility>

namespace fp8lab {
namespace {

EnvironmentSettings& installed() {
  static EnvironmentSettings settings;
  return settings;
}

}  // namespace

EnvironmentSettings environment_from(const EnvLookup& lookup) {
  auto text = [&](const char* name) {
    const char* v = lookup(name);
    return std::string(v != nullptr ? v : "");
  };
  EnvironmentSettings s;
  s.gpt2_vocab_dir = text("FP8LAB_GPT2_VOCAB");
  s.nccl_library = text("FP8LAB_NCCL_LIBRARY");
  s.cudnn_library = text("FP8LAB_CUDNN_LIBRARY");
  s.source_commit = text("FP8LAB_SOURCE_COMMIT");
  s.cuda_sync_after_launch = text("FP8LAB_CUDA_SYNC") == "1";
  return s;
}

void install_environment(EnvironmentSettings settings) { installed() = std::move(settings); }

const EnvironmentSettings& environment() { return installed(); }

}  // namespace fp8lab
