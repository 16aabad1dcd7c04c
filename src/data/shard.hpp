// Token shards in the llm.c `.bin` layout, plus a sidecar with each token's UTF-8 byte length.
//
// Shard (.bin): 256 little-endian int32 header words — [0] magic 20240520, [1] version 1,
// [2] token count N, the rest zero — then N uint16 token ids. Shards written by llm.c's
// data scripts load here and ours load there.
// Sidecar (.bytes, fp8lab's own): 256 int32 header words — [0] magic 20240521, [1] version 1,
// [2] token count N — then N uint8 byte lengths (0 for special tokens). It carries the
// bits-per-byte denominator next to the tokens, so scoring needs no tokenizer.
//
// Readers validate the header against the file size; any mismatch is an fp8lab::Error
// (ErrorKind::format) that names the file and the byte offset of the offending field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace fp8lab::data {

inline constexpr std::int32_t kShardMagic = 20240520;
inline constexpr std::int32_t kShardVersion = 1;
inline constexpr std::int32_t kByteLengthMagic = 20240521;
inline constexpr std::int32_t kByteLengthVersion = 1;
inline constexpr std::size_t kShardHeaderInts = 256;
inline constexpr std::size_t kShardHeaderBytes = kShardHeaderInts * sizeof(std::int32_t);

// The sidecar that belongs to a shard: "x/train_000001.bin" -> "x/train_000001.bytes".
std::filesystem::path byte_length_path(const std::filesystem::path& shard_path);

// Writes a shard (ids must be < 65536) and returns the SHA-256 of the written file.
std::string write_token_shard(const std::filesystem::path& path, std::span<const std::int32_t> ids);
// Writes a byte-length sidecar and returns its SHA-256.
std::string write_byte_length_file(const std::filesystem::path& path,
                                   std::span<const std::uint8_t> lengths);

// A read-only memory mapping of one shard or sidecar, validated on open.
class MappedShard {
 public:
  enum class Kind { tokens, byte_lengths };
  MappedShard(const std::filesystem::path& path, Kind kind);
  ~MappedShard();
  MappedShard(MappedShard&& other) noexcept;
  MappedShard& operator=(MappedShard&& other) noexcept;
  MappedShard(const MappedShard&) = delete;
  MappedShard& operator=(const MappedShard&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::int64_t size() const { return count_; }  // tokens (or lengths) in the file
  // Token i (Kind::tokens) or byte length i (Kind::byte_lengths); no bounds check.
  std::uint32_t at(std::int64_t i) const {
    return kind_ == Kind::tokens ? tokens()[i] : lengths()[i];
  }
  const std::uint16_t* tokens() const {
    return reinterpret_cast<const std::uint16_t*>(base_ + kShardHeaderBytes);
  }
  const std::uint8_t* lengths() const { return base_ + kShardHeaderBytes; }
  // Byte offset in the file of element i (for error messages).
  std::uint64_t offset_of(std::int64_t i) const;

 private:
  void release();
  std::filesystem::path path_;
  Kind kind_ = Kind::tokens;
  const std::uint8_t* base_ = nullptr;
  std::size_t mapped_bytes_ = 0;
  std::int64_t count_ = 0;
};

// Reads a whole shard into memory (validated as MappedShard does).
std::vector<std::int32_t> read_token_shard(const std::filesystem::path& path);
std::vector<std::uint8_t> read_byte_length_file(const std::filesystem::path& path);

}  // namespace fp8lab::data
