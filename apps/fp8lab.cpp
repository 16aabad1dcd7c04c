// fp8lab: one CLI, one subcommand per job (see apps/commands/). `fp8lab --help` lists them.
#include "command_registry.hpp"
#include "fp8lab/environment.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/version.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <new>

namespace fp8lab::cli {
std::vector<CommandSpec>& command_registry() {
  static std::vector<CommandSpec> registry;
  return registry;
}
}  // namespace fp8lab::cli

int main(int argc, char** argv) {
  using namespace fp8lab::cli;
  CLI::App app{
      "fp8lab: train GPT-style models with native FP8 linear layers on Hopper GPUs, and run\n"
      "auditable precision studies (BF16 control vs FP8 candidate). Every subcommand has --help."};
  app.require_subcommand(1);
  app.footer(
      "Example: fp8lab train --preset tiny --steps 50 --out runs/tiny --json\n"
      "Conventions (docs/cli.md): --json prints a subcommand's result as one JSON line on stdout,\n"
      "--json-file F writes it to F; --in names an input file, --out an output.");
  app.set_version_flag("--version", std::string("fp8lab ") + fp8lab::kVersion);
  auto& registry = command_registry();
  std::sort(registry.begin(), registry.end(),
            [](const CommandSpec& a, const CommandSpec& b) { return a.name < b.name; });
  for (const CommandSpec& spec : registry) {
    CLI::App* sub = app.add_subcommand(spec.name, spec.summary);
    spec.setup(*sub);
  }
  // Exit codes: docs/cli.md (fp8lab::exit_code_for maps each ErrorKind).
  namespace code = fp8lab::exit_code;
  try {
    // The library reads no environment variable; the CLI honours these (docs/cli.md).
    fp8lab::install_environment(fp8lab::environment_from(std::getenv));
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? code::ok : code::bad_input;
  } catch (const fp8lab::Error& e) {
    std::fprintf(stderr, "fp8lab: %s\n", e.what());
    return fp8lab::exit_code_for(e.kind());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "fp8lab: out of memory: an allocation failed\n");
    return code::out_of_memory;
  } catch (const std::filesystem::filesystem_error& e) {
    std::fprintf(stderr, "fp8lab: I/O error: %s\n", e.what());
    return code::io;
  } catch (const nlohmann::json::exception& e) {
    // Every JSON value fp8lab handles comes from an input file or argument.
    std::fprintf(stderr, "fp8lab: format error: %s\n", e.what());
    return code::bad_input;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fp8lab: internal error: %s\n", e.what());
    return code::internal;
  }
  return code::ok;
}
