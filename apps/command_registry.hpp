// Subcommands register themselves: each file in apps/commands/ defines one static
// CommandRegistration, so adding a subcommand touches no shared file.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace fp8lab::cli {

struct CommandSpec {
  std::string name;
  std::string summary;
  // Adds options to `sub` and sets its callback. The callback may throw fp8lab::Error: main()
  // prints it as one line and exits with the code of its kind (docs/cli.md).
  std::function<void(CLI::App& sub)> setup;
};

std::vector<CommandSpec>& command_registry();

struct CommandRegistration {
  explicit CommandRegistration(CommandSpec spec) { command_registry().push_back(std::move(spec)); }
};

}  // namespace fp8lab::cli
