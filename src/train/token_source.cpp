// Token sources for the trainer: a synthetic stream, the bytes of a text file, and token shards
// through the data loader (src/data/loader.hpp). All are deterministic in (data_seed, position).
#include "fp8lab/error.hpp"
#include "fp8lab/file_read.hpp"
#include "fp8lab/json_read.hpp"
#include "data/loader.hpp"
#include "fp8lab/rng.hpp"
#include "fp8lab/trainer.hpp"

namespace fp8lab {
namespace {

using nlohmann::json;

// Base for sources whose position is just the number of batches handed out.
class CountingSource : public TokenSource {
 public:
  CountingSource(std::string kind, std::int64_t rows, std::int64_t seq)
      : kind_(std::move(kind)), rows_(rows), seq_(seq) {}
  json position() const override { return {{"kind", kind_}, {"batches", batches_}}; }
  void seek(const json& p) override {
    FP8LAB_CHECK_KIND(ErrorKind::format,
                      json_has_string(p, "kind", kind_) && p.contains("batches") &&
                          p["batches"].is_number_unsigned(),
                      "data position {} does not belong to a '{}' source", json_excerpt(p), kind_);
    batches_ = p["batches"].get<std::uint64_t>();
  }
  void rewind() override { batches_ = 0; }
  std::uint64_t batches_served() const override { return batches_; }

 protected:
  std::string kind_;
  std::int64_t rows_, seq_;
  std::uint64_t batches_ = 0;
};

// Rows follow t[i] = (5 t[i-1] + 3 t[i-2] + 7) mod V, except that one token in eight is
// uniformly random: learnable structure with a known noise floor, for tests and demos.
class SyntheticSource final : public CountingSource {
 public:
  SyntheticSource(const RunConfig& c, std::string_view split)
      : CountingSource("synthetic", c.train.micro_batch, c.model.seq_len),
        vocab_(c.model.vocab_size),
        seed_(c.train.data_seed),
        stream_(stream_id(split)) {}
  void next(std::int32_t* inputs, std::int32_t* targets) override {
    std::vector<std::int64_t> row(static_cast<std::size_t>(seq_ + 1));
    for (std::int64_t r = 0; r < rows_; ++r) {
      const std::uint64_t base =
          (batches_ * static_cast<std::uint64_t>(rows_) + static_cast<std::uint64_t>(r)) *
          static_cast<std::uint64_t>(seq_ + 1);
      for (std::int64_t i = 0; i <= seq_; ++i) {
        const Philox4 bits = philox_block(seed_, stream_, base + static_cast<std::uint64_t>(i));
        const auto random_token =
            static_cast<std::int64_t>(bits.v[1] % static_cast<std::uint32_t>(vocab_));
        const bool noisy = i < 2 || (bits.v[0] & 7u) == 0;
        const auto ii = static_cast<std::size_t>(i);
        row[ii] = noisy ? random_token : (5 * row[ii - 1] + 3 * row[ii - 2] + 7) % vocab_;
      }
      for (std::int64_t t = 0; t < seq_; ++t) {
        inputs[r * seq_ + t] = static_cast<std::int32_t>(row[static_cast<std::size_t>(t)]);
        targets[r * seq_ + t] = static_cast<std::int32_t>(row[static_cast<std::size_t>(t + 1)]);
      }
    }
    ++batches_;
  }

 private:
  std::int64_t vocab_;
  std::uint64_t seed_, stream_;
};

// Bytes of a text file as tokens (vocab >= 256). Rows start at Philox-random offsets. Without
// data.val, the first 90% of data.train is the training split and the last 10% validation.
class ByteSource final : public CountingSource {
 public:
  ByteSource(const RunConfig& c, std::string_view split)
      : CountingSource("bytes", c.train.micro_batch, c.model.seq_len),
        seed_(c.train.data_seed),
        stream_(stream_id(split)) {
    FP8LAB_CHECK(c.model.vocab_size >= 256, "data.kind=bytes needs model.vocab_size >= 256, got {}",
                 c.model.vocab_size);
    const bool own_val = split == "val" && !c.data.val.empty();
    const std::string path = own_val ? c.data.val : c.data.train;
    FP8LAB_CHECK(!path.empty(), "data.kind=bytes needs data.train (a text file)");
    const std::vector<std::uint8_t> all =
        read_file_bytes_bounded(path, kMaxBinaryFileBytes, "data file");
    std::size_t begin = 0, end = all.size();
    if (c.data.val.empty()) {
      const std::size_t cut = all.size() / 10 * 9;
      (split == "val" ? begin : end) = cut;
    }
    bytes_.assign(all.begin() + static_cast<std::ptrdiff_t>(begin),
                  all.begin() + static_cast<std::ptrdiff_t>(end));
    FP8LAB_CHECK(static_cast<std::int64_t>(bytes_.size()) > seq_ + 1,
                 "data file '{}' gives the {} split only {} bytes, fewer than seq_len + 1 = {}",
                 path, split, bytes_.size(), seq_ + 1);
  }
  void next(std::int32_t* inputs, std::int32_t* targets) override {
    const std::uint64_t starts = bytes_.size() - static_cast<std::uint64_t>(seq_);
    for (std::int64_t r = 0; r < rows_; ++r) {
      const std::uint64_t index =
          batches_ * static_cast<std::uint64_t>(rows_) + static_cast<std::uint64_t>(r);
      const Philox4 bits = philox_block(seed_, stream_, index);
      const std::uint64_t start =
          ((static_cast<std::uint64_t>(bits.v[1]) << 32) | bits.v[0]) % starts;
      for (std::int64_t t = 0; t < seq_; ++t) {
        inputs[r * seq_ + t] = bytes_[start + static_cast<std::uint64_t>(t)];
        targets[r * seq_ + t] = bytes_[start + static_cast<std::uint64_t>(t) + 1];
      }
    }
    ++batches_;
  }

 private:
  std::vector<std::uint8_t> bytes_;
  std::uint64_t seed_, stream_;
};

class ShardSource final : public TokenSource {
 public:
  ShardSource(const RunConfig& c, std::string_view split) {
    const std::string& where = split == "val" && !c.data.val.empty() ? c.data.val : c.data.train;
    FP8LAB_CHECK(!where.empty(),
                 "data.kind=shards needs data.train (a .bin, directory or manifest)");
    data::LoaderConfig lc;
    lc.shards = data::list_shards(where, split);
    lc.batch_rows = c.train.micro_batch;
    lc.seq_len = c.model.seq_len;
    lc.seed = c.train.data_seed;
    lc.order = c.data.order == "sequential" ? data::LoaderConfig::Order::sequential
                                            : data::LoaderConfig::Order::shuffled;
    lc.repeat = true;
    lc.vocab_size = static_cast<std::int32_t>(c.model.vocab_size);
    lc.byte_length_table = data::byte_lengths_for_shards(lc.shards, c.model.vocab_size);
    loader_ = std::make_unique<data::TokenLoader>(std::move(lc));
  }
  void next(std::int32_t* inputs, std::int32_t* targets) override {
    FP8LAB_CHECK_KIND(ErrorKind::internal, loader_->next(batch_), "the repeating loader ran dry");
    std::copy(batch_.inputs.begin(), batch_.inputs.end(), inputs);
    std::copy(batch_.targets.begin(), batch_.targets.end(), targets);
  }
  json position() const override {
    return {{"kind", "shards"}, {"loader", loader_->position().to_string()}};
  }
  void seek(const json& p) override {
    FP8LAB_CHECK_KIND(
        ErrorKind::format,
        json_has_string(p, "kind", "shards") && p.contains("loader") && p["loader"].is_string(),
        "data position {} does not belong to a shard source", json_excerpt(p));
    loader_->seek(data::LoaderPosition::parse(p["loader"].get<std::string>()));
  }
  void rewind() override { loader_->rewind(); }
  std::uint64_t batches_served() const override {
    const data::LoaderPosition p = loader_->position();
    return p.epoch * static_cast<std::uint64_t>(loader_->batches_per_epoch()) + p.batch;
  }

 private:
  std::unique_ptr<data::TokenLoader> loader_;
  data::Batch batch_;
};

}  // namespace

std::unique_ptr<TokenSource> make_token_source(const RunConfig& c, std::string_view split) {
  FP8LAB_CHECK(split == "train" || split == "val", "unknown data split '{}'", split);
  if (c.data.kind == "synthetic") return std::make_unique<SyntheticSource>(c, split);
  if (c.data.kind == "bytes") return std::make_unique<ByteSource>(c, split);
  if (c.data.kind == "shards") return std::make_unique<ShardSource>(c, split);
  FP8LAB_FAIL(ErrorKind::invalid_argument, "data.kind '{}' must be synthetic, bytes or shards",
              c.data.kind);
}

}  // namespace fp8lab
