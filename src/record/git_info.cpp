#include "fp8lab/record.hpp"

#include <array>
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
