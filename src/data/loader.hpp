// The training/evaluation data loader: packs a token stream into rows of T+1 tokens.
//
// The shards (in the order given) are concatenated into one stream of N tokens; documents inside
// it are already separated by <|endoftext|> (see `fp8lab data prepare`). Row r is the T+1 tokens
// stream[r*T .. r*T+T]: inputs are its first T, targets its last T, so consecutive rows overlap
// by one token and every token but the first is a target exactly once per epoch. The tail that
// cannot fill a row is dropped. rows_per_epoch = (N-1)/T.
//
// Order: `sequential` takes rows 0,1,2,...; `shuffled` permutes all rows once per epoch with a
// Fisher-Yates shuffle driven by Philox(seed, epoch): the same seed gives the same batches on any
// machine. With world_size > 1, global batch g is split so rank k gets rows
// [(g*world_size + k)*B, +B) of the epoch's order.
//
// Shards are memory-mapped, so any size works. A truncated or corrupt shard (bad header, size
// mismatch, token >= vocab_size, missing sidecar without a byte-length table) throws
// fp8lab::Error (ErrorKind::format / io) naming the file and byte offset.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fp8lab::data {

struct LoaderConfig {
  std::vector<std::filesystem::path> shards;  // see list_shards(); stream order = this order
  std::int64_t batch_rows = 0;                // B
  std::int64_t seq_len = 0;                   // T
  std::uint64_t seed = 0;
  enum class Order { sequential, shuffled } order = Order::shuffled;
  // true: epochs repeat forever (training). false: one pass; the last batch may hold fewer than
  // B rows, and next() then returns false (evaluation).
  bool repeat = true;
  int rank = 0;
  int world_size = 1;
  std::int32_t vocab_size = 65536;  // tokens >= vocab_size are reported as corrupt
  // Byte lengths come from each shard's .bytes sidecar. When a shard has none (e.g. one made by
  // llm.c), this table (indexed by token id, Tokenizer::byte_length_table()) is used instead;
  // with neither, opening the shard fails.
  std::vector<std::uint8_t> byte_length_table;
};

// One batch: row-major [rows, seq_len] arrays.
struct Batch {
  std::int64_t rows = 0;  // == batch_rows except possibly the last batch of a one-pass loader
  std::int64_t seq_len = 0;
  std::vector<std::int32_t> inputs;        // inputs[r*T + t]
  std::vector<std::int32_t> targets;       // the token that follows inputs[r*T + t]
  std::vector<std::uint8_t> target_bytes;  // UTF-8 byte length of targets[i] (0: special token)
};

// Where a loader stands; small and serialisable, for checkpoints. The fingerprint ties it to the
// stream (shard sizes and hashes of their headers), B, T, seed, order and world size: seeking
// with a position from a different configuration is an error.
struct LoaderPosition {
  std::uint64_t epoch = 0;
  std::uint64_t batch = 0;  // batches already returned in this epoch (per rank)
  std::uint64_t fingerprint = 0;
  std::string to_string() const;                       // "epoch=E batch=K fingerprint=HEX"
  static LoaderPosition parse(std::string_view text);  // throws on malformed text
  bool operator==(const LoaderPosition&) const = default;
};

class TokenLoader {
 public:
  explicit TokenLoader(LoaderConfig config);
  ~TokenLoader();
  TokenLoader(TokenLoader&&) noexcept;
  TokenLoader& operator=(TokenLoader&&) noexcept;

  // Fills `batch` (resizing its vectors) with the next batch. Returns false, leaving `batch`
  // untouched, only for a one-pass loader that is finished.
  bool next(Batch& batch);

  LoaderPosition position() const;
  void seek(const LoaderPosition& position);
  void rewind();  // back to epoch 0, batch 0

  std::int64_t total_tokens() const;       // N
  std::int64_t rows_per_epoch() const;     // (N-1)/T
  std::int64_t batches_per_epoch() const;  // for this rank
  const LoaderConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Resolves a data argument to shard paths: a .bin file -> itself; a directory -> its
// `<split>_*.bin` files in name order; a manifest.json -> the shards it lists for `split`.
std::vector<std::filesystem::path> list_shards(const std::filesystem::path& where,
                                               std::string_view split);

// The byte_length_table for shards of which some have no .bytes sidecar (e.g. llm.c's): a
// token's byte length follows from the tokenizer, which the model's vocabulary names: up to 256
// the byte tokenizer, 50257..65536 GPT-2's (llm.c pads 50257 to 50304; the GPT-2 vocabulary from
// $FP8LAB_GPT2_VOCAB or data/cache/gpt2-vocab). Empty when every shard has its sidecar; an
// ErrorKind::invalid_argument error for any other vocabulary size.
std::vector<std::uint8_t> byte_lengths_for_shards(const std::vector<std::filesystem::path>& shards,
                                                  std::int64_t vocab_size);

}  // namespace fp8lab::data
