// TokenLoader: memory-mapped shards -> batches of packed rows (see src/data/loader.hpp).
#include "data/loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>

#include "fp8lab/error.hpp"
#include "fp8lab/rng.hpp"
#include "data/shard.hpp"

namespace fp8lab::data {
namespace {

constexpr std::uint64_t kShuffleStreamTag = 0x4C4F414445520000ull;  // "LOADER"

std::uint64_t fnv1a(std::uint64_t h, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) {
    h ^= (value >> (8 * i)) & 0xFF;
    h *= 0x100000001B3ull;
  }
  return h;
}

}  // namespace

struct TokenLoader::Impl {
  LoaderConfig config;
  std::vector<MappedShard> tokens;
  std::vector<std::optional<MappedShard>> lengths;  // sidecars; nullopt -> byte_length_table
  std::vector<std::int64_t> starts;                 // global index of each shard's first token
  std::int64_t total = 0;
  std::int64_t rows = 0;
  std::int64_t batches = 0;
  std::uint64_t fingerprint = 0;
  std::uint64_t epoch = 0, batch = 0;
  std::vector<std::uint32_t> order;  // the row order of `order_epoch` (shuffled only)
  std::optional<std::uint64_t> order_epoch;

  void open_shards();
  void compute_shape();
  void ensure_order();
  void copy_row(std::int64_t row, std::int32_t* ids, std::uint8_t* bytes) const;
  std::int64_t row_at(std::int64_t index) {
    if (config.order == LoaderConfig::Order::sequential) return index;
    ensure_order();
    return order[static_cast<std::size_t>(index)];
  }
};

void TokenLoader::Impl::open_shards() {
  FP8LAB_CHECK(!config.shards.empty(), "loader: no shards given");
  std::int64_t start = 0;
  for (const auto& path : config.shards) {
    MappedShard shard(path, MappedShard::Kind::tokens);
    const auto sidecar_path = byte_length_path(path);
    std::optional<MappedShard> sidecar;
    if (std::filesystem::exists(sidecar_path)) {
      sidecar.emplace(sidecar_path, MappedShard::Kind::byte_lengths);
      FP8LAB_CHECK_KIND(ErrorKind::format, sidecar->size() == shard.size(),
                        "{} holds {} byte lengths (count at byte offset 8) but {} holds {} tokens",
                        sidecar_path.string(), sidecar->size(), path.string(), shard.size());
    } else {
      FP8LAB_CHECK_KIND(ErrorKind::io, !config.byte_length_table.empty(),
                        "loader: {} has no byte-length sidecar {} and no byte_length_table was "
                        "given",
                        path.string(), sidecar_path.string());
    }
    starts.push_back(start);
    start += shard.size();
    fingerprint = fnv1a(fingerprint, static_cast<std::uint64_t>(shard.size()));
    for (std::int64_t i = 0; i < std::min<std::int64_t>(shard.size(), 8); ++i) {
      fingerprint = fnv1a(fingerprint, shard.at(i));
    }
    tokens.push_back(std::move(shard));
    lengths.push_back(std::move(sidecar));
  }
  total = start;
}

void TokenLoader::Impl::compute_shape() {
  const std::int64_t B = config.batch_rows, T = config.seq_len;
  FP8LAB_CHECK(B > 0 && T > 0, "loader: batch_rows {} and seq_len {} must be positive", B, T);
  FP8LAB_CHECK(config.world_size > 0 && config.rank >= 0 && config.rank < config.world_size,
               "loader: rank {} is not in [0, world_size {})", config.rank, config.world_size);
  rows = total > 0 ? (total - 1) / T : 0;
  FP8LAB_CHECK(rows <= std::numeric_limits<std::uint32_t>::max(),
               "loader: {} rows exceed the 2^32 row limit", rows);
  const std::int64_t per_global_batch = B * config.world_size;
  if (config.repeat) {
    batches = rows / per_global_batch;
    FP8LAB_CHECK(batches > 0,
                 "loader: {} tokens make {} rows of {}+1, fewer than one batch of {} rows x {} "
                 "ranks",
                 total, rows, T, B, config.world_size);
  } else {
    const std::int64_t mine = rows - config.rank * B;
    batches = mine > 0 ? (mine + per_global_batch - 1) / per_global_batch : 0;
  }
  for (std::uint64_t v :
       {static_cast<std::uint64_t>(B), static_cast<std::uint64_t>(T), config.seed,
        static_cast<std::uint64_t>(config.order), static_cast<std::uint64_t>(config.world_size),
        static_cast<std::uint64_t>(config.repeat)}) {
    fingerprint = fnv1a(fingerprint, v);
  }
}

void TokenLoader::Impl::ensure_order() {
  if (order_epoch == epoch) return;
  order.resize(static_cast<std::size_t>(rows));
  std::iota(order.begin(), order.end(), 0u);
  // Fisher-Yates driven by Philox(seed, epoch): 64 random bits per swap make the modulo bias
  // negligible (< 2^-32 for 2^32 rows).
  for (std::int64_t i = rows - 1; i > 0; --i) {
    const Philox4 r =
        philox_block(config.seed, kShuffleStreamTag ^ epoch, static_cast<std::uint64_t>(i));
    const std::uint64_t word = (static_cast<std::uint64_t>(r.v[1]) << 32) | r.v[0];
    const auto j = static_cast<std::int64_t>(word % static_cast<std::uint64_t>(i + 1));
    std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
  }
  order_epoch = epoch;
}

void TokenLoader::Impl::copy_row(std::int64_t row, std::int32_t* ids, std::uint8_t* bytes) const {
  std::int64_t g = row * config.seq_len;
  const std::int64_t n = config.seq_len + 1;
  auto s = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), g) -
                                    starts.begin() - 1);
  for (std::int64_t k = 0; k < n; ++g) {
    while (g - starts[s] >= tokens[s].size()) ++s;  // skips empty shards too
    const MappedShard& shard = tokens[s];
    const std::int64_t local = g - starts[s];
    const std::uint32_t id = shard.at(local);
    FP8LAB_CHECK_KIND(ErrorKind::format, id < static_cast<std::uint32_t>(config.vocab_size),
                      "token shard {}: token {} at byte offset {} is outside the vocabulary of {}",
                      shard.path().string(), id, shard.offset_of(local), config.vocab_size);
    std::uint32_t len;
    if (lengths[s]) {
      len = lengths[s]->at(local);
    } else {
      FP8LAB_CHECK_KIND(ErrorKind::format, id < config.byte_length_table.size(),
                        "token shard {}: token {} at byte offset {} has no entry in the "
                        "byte_length_table of {}",
                        shard.path().string(), id, shard.offset_of(local),
                        config.byte_length_table.size());
      len = config.byte_length_table[id];
    }
    ids[k] = static_cast<std::int32_t>(id);
    bytes[k] = static_cast<std::uint8_t>(len);
    ++k;
  }
}

TokenLoader::TokenLoader(LoaderConfig config) : impl_(std::make_unique<Impl>()) {
  impl_->config = std::move(config);
  impl_->open_shards();
  impl_->compute_shape();
}

TokenLoader::~TokenLoader() = default;
TokenLoader::TokenLoader(TokenLoader&&) noexcept = default;
TokenLoader& TokenLoader::operator=(TokenLoader&&) noexcept = default;

bool TokenLoader::next(Batch& out) {
  Impl& m = *impl_;
  if (m.batch >= static_cast<std::uint64_t>(m.batches)) {
    if (!m.config.repeat) return false;
    ++m.epoch;
    m.batch = 0;
  }
  const std::int64_t B = m.config.batch_rows, T = m.config.seq_len;
  const std::int64_t first =
      (static_cast<std::int64_t>(m.batch) * m.config.world_size + m.config.rank) * B;
  const std::int64_t rows = std::min(B, m.rows - first);
  out.rows = rows;
  out.seq_len = T;
  out.inputs.resize(static_cast<std::size_t>(rows * T));
  out.targets.resize(static_cast<std::size_t>(rows * T));
  out.target_bytes.resize(static_cast<std::size_t>(rows * T));
  std::vector<std::int32_t> ids(static_cast<std::size_t>(T + 1));
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(T + 1));
  for (std::int64_t r = 0; r < rows; ++r) {
    m.copy_row(m.row_at(first + r), ids.data(), bytes.data());
    const auto at = static_cast<std::ptrdiff_t>(r * T);
    std::copy(ids.begin(), ids.end() - 1, out.inputs.begin() + at);
    std::copy(ids.begin() + 1, ids.end(), out.targets.begin() + at);
    std::copy(bytes.begin() + 1, bytes.end(), out.target_bytes.begin() + at);
  }
  ++m.batch;
  return true;
}

LoaderPosition TokenLoader::position() const {
  return {impl_->epoch, impl_->batch, impl_->fingerprint};
}

void TokenLoader::seek(const LoaderPosition& p) {
  FP8LAB_CHECK(p.fingerprint == impl_->fingerprint,
               "loader: position fingerprint {:016x} belongs to another stream or configuration "
               "(this loader's is {:016x})",
               p.fingerprint, impl_->fingerprint);
  FP8LAB_CHECK(p.batch <= static_cast<std::uint64_t>(impl_->batches),
               "loader: position batch {} exceeds the {} batches of an epoch", p.batch,
               impl_->batches);
  impl_->epoch = p.epoch;
  impl_->batch = p.batch;
}

void TokenLoader::rewind() {
  impl_->epoch = 0;
  impl_->batch = 0;
}

std::int64_t TokenLoader::total_tokens() const { return impl_->total; }
std::int64_t TokenLoader::rows_per_epoch() const { return impl_->rows; }
std::int64_t TokenLoader::batches_per_epoch() const { return impl_->batches; }
const LoaderConfig& TokenLoader::config() const { return impl_->config; }

std::string LoaderPosition::to_string() const {
  return fmt::format("epoch={} batch={} fingerprint={:016x}", epoch, batch, fingerprint);
}

LoaderPosition LoaderPosition::parse(std::string_view text) {
  LoaderPosition p;
  const auto field = [&](std::string_view key, int base) -> std::uint64_t {
    const std::size_t at = text.find(key);
    FP8LAB_CHECK(at != std::string_view::npos, "loader position '{}': no '{}'", text, key);
    const char* first = text.data() + at + key.size();
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(first, text.data() + text.size(), value, base);
    FP8LAB_CHECK(ec == std::errc() && end != first, "loader position '{}': bad value after '{}'",
                 text, key);
    return value;
  };
  p.epoch = field("epoch=", 10);
  p.batch = field("batch=", 10);
  p.fingerprint = field("fingerprint=", 16);
  return p;
}

}  // namespace fp8lab::data
