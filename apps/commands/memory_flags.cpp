#include "commands/memory_flags.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <string>

namespace fp8lab::cli {

void MemoryFlags::add_to(CLI::App& sub, bool with_key) {
  for (std::size_t i = 0; i < kMemoryOptions.size(); ++i) {
    const MemoryOption& m = kMemoryOptions[i];
    const std::string help = with_key ? fmt::format("{} (precision.{})", m.help, m.key)
                                      : std::string(m.help);
    sub.add_flag(fmt::format("--{}", m.label), on[i], help);
  }
}

void MemoryFlags::apply(PrecisionConfig& precision) const {
  for (std::size_t i = 0; i < kMemoryOptions.size(); ++i)
    if (on[i]) precision.*kMemoryOptions[i].on = true;
}

}  // namespace fp8lab::cli
