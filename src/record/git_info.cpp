#include "record/record.hpp"
#include "fp8lab/environment.hpp"

#include <array>
#include <cstdlib>
#include <cstdio>
#include <memory>

namespace fp8lab {

// Runs a shell command and returns its stdout, or nullopt-like empty + ok=false on failure.
static bool run_capture(const std::string& command, std::string* out) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return false;
  std::array<char, 256> buf{};
  out->clear();
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe.get())) *out += buf.data();
  return pclose(pipe.release()) == 0;
}

static std::string quote(const std::filesystem::path& p) {
  std::string s = "'";
  for (char c : p.string()) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return s + "'";
}

SourceInfo git_source_info(const std::filesystem::path& repo) {
  SourceInfo info;
  // A binary carried to another machine (scripts/gpu-pack) records the commit it was built
  // from in FP8LAB_SOURCE_COMMIT ("<40 hex>" or "<40 hex> dirty"; fp8lab/environment.hpp): the
  // tree copied there may carry stale git metadata, and the binary's own commit is what
  // produced the numbers.
  if (const std::string& v = environment().source_commit; !v.empty()) {
    info.commit = v.substr(0, v.find_first_of(" \n"));
    info.dirty = v.find("dirty") != std::string::npos;
    return info;
  }
  std::string out;
  const std::string git = "git -C " + quote(repo) + " ";
  if (!run_capture(git + "rev-parse HEAD 2>/dev/null", &out) || out.size() < 40) return info;
  info.commit = out.substr(0, 40);
  // Untracked files do not make a build dirty; modified tracked files do.
  if (run_capture(git + "status --porcelain --untracked-files=no 2>/dev/null", &out)) {
    info.dirty = !out.empty();
  }
  return info;
}

}  // namespace fp8lab
