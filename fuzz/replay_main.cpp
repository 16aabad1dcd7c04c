// Replays fuzz inputs without libFuzzer, so that CTest runs every target's seeds and crash
// regressions on any compiler: `fuzz_replay TARGET [--skip-unless-exists PATH] FILE|DIR...`.
// Each fuzz_<target>.cpp is compiled with LLVMFuzzerTestOneInput renamed to fuzz_<target>
// (fuzz/replay.cmake); an input that crashes, traps or throws fails the test.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using FuzzTarget = int (*)(const std::uint8_t*, std::size_t);

#define FP8LAB_FUZZ_TARGETS(X) \
  X(vocab) X(shard) X(jsonl) X(pack) X(gpt2_encode) X(safetensors) X(checkpoint) X(study_plan) \
  X(config_override)
#define FP8LAB_DECLARE(name) extern "C" int fuzz_##name(const std::uint8_t*, std::size_t);
FP8LAB_FUZZ_TARGETS(FP8LAB_DECLARE)

namespace {

FuzzTarget find_target(const std::string& name) {
#define FP8LAB_MATCH(n) \
  if (name == #n) return fuzz_##n;
  FP8LAB_FUZZ_TARGETS(FP8LAB_MATCH)
  return nullptr;
}

int replay_file(FuzzTarget target, const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                        std::istreambuf_iterator<char>());
  target(bytes.data(), bytes.size());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fuzz_replay TARGET [--skip-unless-exists PATH] FILE|DIR...\n");
    return 2;
  }
  const FuzzTarget target = find_target(argv[1]);
  if (target == nullptr) {
    std::fprintf(stderr, "fuzz_replay: unknown target '%s'\n", argv[1]);
    return 2;
  }
  int replayed = 0;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--skip-unless-exists") == 0 && i + 1 < argc) {
      if (!std::filesystem::exists(argv[++i])) {
        std::printf("fuzz_replay %s: skipped, %s is missing\n", argv[1], argv[i]);
        return 77;
      }
      continue;
    }
    const std::filesystem::path path(argv[i]);
    if (!std::filesystem::exists(path)) continue;  // a target without regressions yet
    if (!std::filesystem::is_directory(path)) {
      replayed += replay_file(target, path);
      continue;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(path)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::printf("fuzz_replay %s: %s\n", argv[1], f.filename().c_str());
      std::fflush(stdout);
      replayed += replay_file(target, f);
    }
  }
  std::printf("fuzz_replay %s: %d inputs replayed, none crashed\n", argv[1], replayed);
  return replayed > 0 ? 0 : 1;
}
