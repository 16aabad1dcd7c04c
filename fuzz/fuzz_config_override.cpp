// Fuzzes `--set section.key=value` (apply_override) on arbitrary text, then validation: only
// fp8lab::Error may come out, and a config that takes the override and validates survives a
// round trip through its JSON.
#include <string_view>

#include "fp8lab/config.hpp"
#include "fp8lab/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fp8lab;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    RunConfig config = run_preset("tiny");
    apply_override(config, text);
    config.validate();
    if (!(run_config_from_json(to_json(config), RunConfig{}) == config)) __builtin_trap();
  } catch (const Error&) {
  }
  return 0;
}
