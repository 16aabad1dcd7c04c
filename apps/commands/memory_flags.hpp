// The memory options (kMemoryOptions in fp8lab/config.hpp) as command-line flags, one
// --LABEL per option with the table's help, so that every command that builds a model offers
// the same set under the same names (train, grads).
#pragma once

#include "fp8lab/config.hpp"

#include <CLI/CLI.hpp>

#include <array>

namespace fp8lab::cli {

struct MemoryFlags {
  std::array<bool, kMemoryOptions.size()> on{};

  // Adds --LABEL for each option; `with_key` ends each help with "(precision.KEY)", for commands
  // whose options are also config keys.
  void add_to(CLI::App& sub, bool with_key);
  // Switches on, in `precision`, each option whose flag was given (a flag never switches one off:
  // the config's value stands when it is absent).
  void apply(PrecisionConfig& precision) const;
};

}  // namespace fp8lab::cli
