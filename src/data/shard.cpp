// llm.c-layout token shards and fp8lab's byte-length sidecars: writing, mapping, validating.
#include "data/shard.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

#include "fp8lab/error.hpp"
#include "core/sha256.hpp"

namespace fp8lab::data {
namespace {

struct Layout {
  std::int32_t magic;
  std::int32_t version;
  std::size_t element_bytes;
  const char* what;
};

Layout layout_of(MappedShard::Kind kind) {
  return kind == MappedShard::Kind::tokens
             ? Layout{kShardMagic, kShardVersion, sizeof(std::uint16_t), "token shard"}
             : Layout{kByteLengthMagic, kByteLengthVersion, sizeof(std::uint8_t),
                      "byte-length file"};
}

std::string write_with_header(const std::filesystem::path& path, const Layout& layout,
                              std::int64_t count, const void* payload, std::size_t payload_bytes) {
  FP8LAB_CHECK(count <= std::numeric_limits<std::int32_t>::max(),
               "{}: {} elements do not fit the int32 count of the llm.c header; use more shards",
               path.string(), count);
  std::int32_t header[kShardHeaderInts] = {};
  header[0] = layout.magic;
  header[1] = layout.version;
  header[2] = static_cast<std::int32_t>(count);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  FP8LAB_CHECK_KIND(ErrorKind::io, out.good(), "cannot create {}", path.string());
  out.write(reinterpret_cast<const char*>(header), sizeof(header));
  out.write(static_cast<const char*>(payload), static_cast<std::streamsize>(payload_bytes));
  out.close();
  FP8LAB_CHECK_KIND(ErrorKind::io, !out.fail(), "writing {} failed", path.string());
  Sha256 hash;
  hash.update(header, sizeof(header));
  hash.update(payload, payload_bytes);
  return hash.hex_digest();
}

}  // namespace

std::filesystem::path byte_length_path(const std::filesystem::path& shard_path) {
  std::filesystem::path p = shard_path;
  p.replace_extension(".bytes");
  return p;
}

std::string write_token_shard(const std::filesystem::path& path,
                              std::span<const std::int32_t> ids) {
  std::vector<std::uint16_t> packed(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    FP8LAB_CHECK(ids[i] >= 0 && ids[i] <= 65535, "{}: token {} at index {} does not fit uint16",
                 path.string(), ids[i], i);
    packed[i] = static_cast<std::uint16_t>(ids[i]);
  }
  return write_with_header(path, layout_of(MappedShard::Kind::tokens),
                           static_cast<std::int64_t>(ids.size()), packed.data(),
                           packed.size() * sizeof(std::uint16_t));
}

std::string write_byte_length_file(const std::filesystem::path& path,
                                   std::span<const std::uint8_t> lengths) {
  return write_with_header(path, layout_of(MappedShard::Kind::byte_lengths),
                           static_cast<std::int64_t>(lengths.size()), lengths.data(),
                           lengths.size());
}

MappedShard::MappedShard(const std::filesystem::path& path, Kind kind) : path_(path), kind_(kind) {
  const Layout layout = layout_of(kind);
  const std::string name = path.string();
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  FP8LAB_CHECK_KIND(ErrorKind::io, fd >= 0, "cannot open {} {}: {}", layout.what, name,
                    std::strerror(errno));
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  if (!stat_ok || file_size < kShardHeaderBytes) {
    ::close(fd);
    FP8LAB_FAIL(ErrorKind::format,
                "{} {} is truncated: {} bytes, shorter than its {}-byte header (at byte offset {})",
                layout.what, name, file_size, kShardHeaderBytes, file_size);
  }
  void* mapped = ::mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  FP8LAB_CHECK_KIND(ErrorKind::io, mapped != MAP_FAILED, "cannot map {}: {}", name,
                    std::strerror(errno));
  base_ = static_cast<const std::uint8_t*>(mapped);
  mapped_bytes_ = file_size;
  std::int32_t header[3];
  std::memcpy(header, base_, sizeof(header));
  try {
    FP8LAB_CHECK_KIND(ErrorKind::format, header[0] == layout.magic,
                      "{} {}: bad magic {} at byte offset 0 (expected {})", layout.what, name,
                      header[0], layout.magic);
    FP8LAB_CHECK_KIND(ErrorKind::format, header[1] == layout.version,
                      "{} {}: unsupported version {} at byte offset 4 (expected {})", layout.what,
                      name, header[1], layout.version);
    FP8LAB_CHECK_KIND(ErrorKind::format, header[2] >= 0,
                      "{} {}: negative count {} at byte offset 8", layout.what, name, header[2]);
    const std::uint64_t expected =
        kShardHeaderBytes + static_cast<std::uint64_t>(header[2]) * layout.element_bytes;
    FP8LAB_CHECK_KIND(ErrorKind::format, file_size >= expected,
                      "{} {} is truncated: the header (byte offset 8) promises {} elements = {} "
                      "bytes, the file ends at byte offset {}",
                      layout.what, name, header[2], expected, file_size);
    FP8LAB_CHECK_KIND(ErrorKind::format, file_size == expected,
                      "{} {} has {} unexpected trailing bytes from byte offset {} (the header "
                      "promises {} elements)",
                      layout.what, name, file_size - expected, expected, header[2]);
  } catch (...) {
    release();
    throw;
  }
  count_ = header[2];
}

std::uint64_t MappedShard::offset_of(std::int64_t i) const {
  return kShardHeaderBytes + static_cast<std::uint64_t>(i) * layout_of(kind_).element_bytes;
}

void MappedShard::release() {
  if (base_ != nullptr) ::munmap(const_cast<std::uint8_t*>(base_), mapped_bytes_);
  base_ = nullptr;
  mapped_bytes_ = 0;
}

MappedShard::~MappedShard() { release(); }

MappedShard::MappedShard(MappedShard&& other) noexcept
    : path_(std::move(other.path_)),
      kind_(other.kind_),
      base_(other.base_),
      mapped_bytes_(other.mapped_bytes_),
      count_(other.count_) {
  other.base_ = nullptr;
  other.mapped_bytes_ = 0;
  other.count_ = 0;
}

MappedShard& MappedShard::operator=(MappedShard&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    kind_ = other.kind_;
    base_ = other.base_;
    mapped_bytes_ = other.mapped_bytes_;
    count_ = other.count_;
    other.base_ = nullptr;
    other.mapped_bytes_ = 0;
    other.count_ = 0;
  }
  return *this;
}

std::vector<std::int32_t> read_token_shard(const std::filesystem::path& path) {
  MappedShard shard(path, MappedShard::Kind::tokens);
  return std::vector<std::int32_t>(shard.tokens(), shard.tokens() + shard.size());
}

std::vector<std::uint8_t> read_byte_length_file(const std::filesystem::path& path) {
  MappedShard file(path, MappedShard::Kind::byte_lengths);
  return std::vector<std::uint8_t>(file.lengths(), file.lengths() + file.size());
}

}  // namespace fp8lab::data
