// --json and --json-file, with one meaning in every subcommand (docs/cli.md, "Conventions"):
// --json prints the command's result as one JSON object on one line of stdout, and nothing else
// goes to stdout (its text lines go to stderr); --json-file F writes the same object to F,
// pretty-printed, beside the usual text. F never replaces one of the command's inputs.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace fp8lab::cli {

struct JsonOutput {
  bool to_stdout = false;  // --json
  std::string file;        // --json-file

  // Adds --json and --json-file to `sub`; `what` names the object in their help, e.g. "the run
  // summary (run.json)".
  void add_options(CLI::App& sub, const std::string& what);
  // Throws ErrorKind::invalid_argument when --json-file names one of `inputs` (see
  // check_output_not_input); empty paths are skipped.
  void check_not_input(const std::vector<std::filesystem::path>& inputs) const;
  // Where the command's text lines go: stderr under --json, else stdout.
  std::FILE* text() const { return to_stdout ? stderr : stdout; }
  // Writes `j` to --json-file and, under --json, as one line to stdout. Strings that are not
  // UTF-8 (a sampled byte sequence, a file name) get U+FFFD for their bad bytes.
  void emit(const nlohmann::json& j) const;
};

// While alive and `active`, everything written to stdout (file descriptor 1: this process's
// printf and the children it starts) goes to stderr instead, so that --json leaves stdout to the
// one JSON line of a command whose library code prints its progress to stdout.
class StdoutToStderr {
 public:
  explicit StdoutToStderr(bool active);
  ~StdoutToStderr();
  StdoutToStderr(const StdoutToStderr&) = delete;
  StdoutToStderr& operator=(const StdoutToStderr&) = delete;

 private:
  int saved_ = -1;
};

}  // namespace fp8lab::cli
