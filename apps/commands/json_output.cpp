#include "commands/json_output.hpp"

#include <unistd.h>

#include "fp8lab/checkpoint.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/output_dir.hpp"

namespace fp8lab::cli {

void JsonOutput::add_options(CLI::App& sub, const std::string& what) {
  sub.add_flag("--json", to_stdout,
               "print " + what + " as one JSON object on one line of stdout, and nothing else there "
               "(text lines go to stderr)");
  sub.add_option("--json-file", file, "also write " + what + " as JSON to this file");
}

void JsonOutput::check_not_input(const std::vector<std::filesystem::path>& inputs) const {
  if (file.empty()) return;
  std::vector<std::filesystem::path> named;
  for (const auto& p : inputs)
    if (!p.empty()) named.push_back(p);
  check_output_not_input(file, named, "--json-file");
}

void JsonOutput::emit(const nlohmann::json& j) const {
  if (!file.empty()) {
    const std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    write_file_atomic(file, text.data(), text.size());
  }
  if (to_stdout) {
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    std::fflush(stdout);
  }
}

StdoutToStderr::StdoutToStderr(bool active) {
  if (!active) return;
  std::fflush(stdout);
  saved_ = ::dup(STDOUT_FILENO);
  FP8LAB_CHECK_KIND(ErrorKind::io, saved_ >= 0 && ::dup2(STDERR_FILENO, STDOUT_FILENO) >= 0,
                    "cannot send stdout to stderr for --json");
}

StdoutToStderr::~StdoutToStderr() {
  if (saved_ < 0) return;
  std::fflush(stdout);
  ::dup2(saved_, STDOUT_FILENO);
  ::close(saved_);
}

}  // namespace fp8lab::cli
