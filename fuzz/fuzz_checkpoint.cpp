// Fuzzes the checkpoint metadata parser (meta.json, which embeds a whole RunConfig) on arbitrary
// text: only fp8lab::Error may come out, and metadata that parses must survive a round trip.
#include <string_view>

#include "fp8lab/checkpoint.hpp"
#include "fp8lab/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fp8lab;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const CheckpointMeta meta = parse_checkpoint_meta(text, "fuzz/meta.json");
    const std::string again = to_json(meta).dump();
    const CheckpointMeta back = parse_checkpoint_meta(again, "fuzz/meta.json (round trip)");
    if (back.step != meta.step || back.adam_updates != meta.adam_updates ||
        !(back.config == meta.config) || back.init_sha256 != meta.init_sha256 ||
        back.data_position != meta.data_position) {
      __builtin_trap();
    }
  } catch (const fp8lab::Error&) {
  }
  return 0;
}
