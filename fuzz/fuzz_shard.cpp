// Fuzzes the shard and sidecar readers and the loader on arbitrary file contents: only
// fp8lab::Error may come out, and tokens read back must stay inside the file.
#include "fp8lab/error.hpp"
#include "data/loader.hpp"
#include "data/shard.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fp8lab::data;
  const auto path = fp8lab::fuzz::write_temp(data, size, ".bin");
  try {
    MappedShard s(path, MappedShard::Kind::tokens);
    // A shard that opens is exactly header + 2 bytes per token; reading every token stays inside.
    if (s.offset_of(s.size()) != size) __builtin_trap();
    std::uint64_t sum = 0;
    for (std::int64_t i = 0; i < s.size(); ++i) sum += s.at(i);
    (void)sum;
    LoaderConfig cfg;
    cfg.shards = {path};
    cfg.batch_rows = 2;
    cfg.seq_len = 3;
    cfg.repeat = false;
    cfg.vocab_size = 50257;
    cfg.byte_length_table.assign(65536, 1);
    TokenLoader loader(cfg);
    Batch b;
    while (loader.next(b)) {
    }
  } catch (const fp8lab::Error&) {
  }
  try {
    MappedShard s(path, MappedShard::Kind::byte_lengths);
    if (s.offset_of(s.size()) != size) __builtin_trap();
  } catch (const fp8lab::Error&) {
  }
  return 0;
}
