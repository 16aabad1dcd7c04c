// TokenLoader: rows of T+1 from a multi-shard stream, seeded order, resumable positions, ranks,
// byte lengths from sidecars or a table, corrupt-token errors.
#include <algorithm>
#include <map>

#include "data_test_util.hpp"
#include "fp8lab/error.hpp"
#include "data/loader.hpp"
#include "data/shard.hpp"

namespace fp8lab::data {
namespace {

using testing::ScratchDir;

// A random stream split into shards of random sizes (one may be empty), each with a sidecar.
struct Stream {
  std::vector<std::int32_t> ids;
  std::vector<std::uint8_t> lengths;
  std::vector<std::filesystem::path> shards;
};

Stream make_stream(const ScratchDir& dir, std::mt19937_64& rng, std::int64_t n, int n_shards,
                   bool sidecars = true) {
  Stream s;
  for (std::int64_t i = 0; i < n; ++i) {
    s.ids.push_back(static_cast<std::int32_t>(rng() % 50257));
    s.lengths.push_back(static_cast<std::uint8_t>(1 + rng() % 20));
  }
  std::vector<std::int64_t> cuts = {0, n};
  for (int k = 1; k < n_shards; ++k) cuts.push_back(static_cast<std::int64_t>(rng() % (n + 1)));
  std::sort(cuts.begin(), cuts.end());
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    const auto path = dir / ("train_" + std::to_string(100000 + k) + ".bin");
    const auto a = static_cast<std::size_t>(cuts[k]), b = static_cast<std::size_t>(cuts[k + 1]);
    write_token_shard(path, std::span(s.ids).subspan(a, b - a));
    if (sidecars)
      write_byte_length_file(byte_length_path(path), std::span(s.lengths).subspan(a, b - a));
    s.shards.push_back(path);
  }
  return s;
}

TEST(TokenLoader, SequentialRowsCoverTheStreamOnce) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir("loader_seq");
  const std::int64_t n = 500 + static_cast<std::int64_t>(rng() % 3000);
  const Stream s = make_stream(dir, rng, n, 1 + static_cast<int>(rng() % 5));
  LoaderConfig cfg;
  cfg.shards = list_shards(dir.path(), "train");
  ASSERT_EQ(cfg.shards, s.shards);
  cfg.batch_rows = 1 + static_cast<std::int64_t>(rng() % 4);
  cfg.seq_len = 1 + static_cast<std::int64_t>(rng() % 64);
  cfg.order = LoaderConfig::Order::sequential;
  cfg.repeat = false;
  TokenLoader loader(cfg);
  const std::int64_t T = cfg.seq_len;
  ASSERT_EQ(loader.total_tokens(), n);
  ASSERT_EQ(loader.rows_per_epoch(), (n - 1) / T);
  Batch b;
  b.inputs.assign(7, -1);  // poison: next() must resize and overwrite
  std::int64_t row = 0;
  while (loader.next(b)) {
    ASSERT_EQ(static_cast<std::int64_t>(b.inputs.size()), b.rows * T);
    for (std::int64_t r = 0; r < b.rows; ++r, ++row) {
      for (std::int64_t t = 0; t < T; ++t) {
        const auto g = static_cast<std::size_t>(row * T + t);
        const auto i = static_cast<std::size_t>(r * T + t);
        ASSERT_EQ(b.inputs[i], s.ids[g]) << "row " << row << " t " << t;
        ASSERT_EQ(b.targets[i], s.ids[g + 1]) << "row " << row << " t " << t;
        ASSERT_EQ(b.target_bytes[i], s.lengths[g + 1]) << "row " << row << " t " << t;
      }
    }
  }
  EXPECT_EQ(row, loader.rows_per_epoch());
  EXPECT_FALSE(loader.next(b));
}

std::vector<std::int32_t> first_inputs(TokenLoader& loader, int batches) {
  std::vector<std::int32_t> out;
  Batch b;
  for (int k = 0; k < batches; ++k) {
    EXPECT_TRUE(loader.next(b));
    out.insert(out.end(), b.inputs.begin(), b.inputs.end());
  }
  return out;
}

TEST(TokenLoader, ShuffledEpochsArePermutationsFixedBySeed) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir("loader_shuf");
  const Stream s = make_stream(dir, rng, 4000 + static_cast<std::int64_t>(rng() % 2000), 3);
  LoaderConfig cfg;
  cfg.shards = s.shards;
  cfg.batch_rows = 4;
  cfg.seq_len = 16;
  cfg.seed = rng();
  TokenLoader loader(cfg);
  const std::int64_t per_epoch = loader.batches_per_epoch();
  ASSERT_EQ(per_epoch, loader.rows_per_epoch() / 4);
  // Rows of one epoch are distinct rows of the stream: identify each by its first index.
  std::map<std::vector<std::int32_t>, int> seen;
  Batch b;
  std::vector<std::int32_t> epoch0;
  for (std::int64_t k = 0; k < per_epoch; ++k) {
    ASSERT_TRUE(loader.next(b));
    for (std::int64_t r = 0; r < b.rows; ++r) {
      const auto at = b.targets.begin() + r * 16;
      // each target row must be the stream shifted by one from its inputs
      ASSERT_TRUE(std::equal(b.inputs.begin() + r * 16 + 1, b.inputs.begin() + (r + 1) * 16, at));
      ++seen[std::vector<std::int32_t>(b.inputs.begin() + r * 16, b.inputs.begin() + (r + 1) * 16)];
    }
    epoch0.insert(epoch0.end(), b.inputs.begin(), b.inputs.end());
  }
  for (const auto& [row, count] : seen) ASSERT_EQ(count, 1);
  EXPECT_EQ(static_cast<std::int64_t>(seen.size()), per_epoch * 4);
  // The next epoch is a different order; the same seed replays epoch 0; another seed differs.
  const std::vector<std::int32_t> epoch1 = first_inputs(loader, static_cast<int>(per_epoch));
  EXPECT_NE(epoch1, epoch0);
  EXPECT_EQ(loader.position().epoch, 1u);
  TokenLoader replay(cfg);
  EXPECT_EQ(first_inputs(replay, static_cast<int>(per_epoch)), epoch0);
  cfg.seed ^= 1;
  TokenLoader other(cfg);
  EXPECT_NE(first_inputs(other, static_cast<int>(per_epoch)), epoch0);
}

TEST(TokenLoader, ResumesFromASerialisedPosition) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir("loader_resume");
  const Stream s = make_stream(dir, rng, 3000, 2);
  LoaderConfig cfg;
  cfg.shards = s.shards;
  cfg.batch_rows = 3;
  cfg.seq_len = 32;
  cfg.seed = rng();
  TokenLoader a(cfg);
  const int skip = 1 + static_cast<int>(rng() % (2 * a.batches_per_epoch()));
  first_inputs(a, skip);
  const std::string saved = a.position().to_string();
  const std::vector<std::int32_t> continued = first_inputs(a, 12);
  TokenLoader b(cfg);
  b.seek(LoaderPosition::parse(saved));
  EXPECT_EQ(b.position(), LoaderPosition::parse(saved));
  EXPECT_EQ(first_inputs(b, 12), continued);
  // A position from another configuration is refused.
  cfg.seq_len = 31;
  TokenLoader c(cfg);
  EXPECT_THROW(c.seek(LoaderPosition::parse(saved)), Error);
  EXPECT_THROW(LoaderPosition::parse("epoch=1 batch=x"), Error);
}

TEST(TokenLoader, RanksSplitEachGlobalBatch) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir("loader_ranks");
  const Stream s = make_stream(dir, rng, 5000, 2);
  LoaderConfig cfg;
  cfg.shards = s.shards;
  cfg.batch_rows = 4;
  cfg.seq_len = 8;
  cfg.seed = rng();
  cfg.world_size = 2;
  cfg.rank = 0;
  TokenLoader r0(cfg);
  cfg.rank = 1;
  TokenLoader r1(cfg);
  cfg.world_size = 1;
  cfg.rank = 0;
  cfg.batch_rows = 8;
  TokenLoader single(cfg);
  for (int k = 0; k < 5; ++k) {
    std::vector<std::int32_t> both = first_inputs(r0, 1);
    const std::vector<std::int32_t> second = first_inputs(r1, 1);
    both.insert(both.end(), second.begin(), second.end());
    EXPECT_EQ(both, first_inputs(single, 1)) << "global batch " << k;
  }
}

TEST(TokenLoader, ByteLengthsFromTableWhenNoSidecar) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir("loader_table");
  const Stream s = make_stream(dir, rng, 800, 1, /*sidecars=*/false);
  LoaderConfig cfg;
  cfg.shards = s.shards;
  cfg.batch_rows = 2;
  cfg.seq_len = 10;
  EXPECT_THROW(TokenLoader{cfg}, Error);  // no sidecar, no table
  cfg.byte_length_table.resize(50257);
  for (auto& l : cfg.byte_length_table) l = static_cast<std::uint8_t>(1 + rng() % 30);
  TokenLoader loader(cfg);
  Batch b;
  ASSERT_TRUE(loader.next(b));
  for (std::size_t i = 0; i < b.targets.size(); ++i) {
    EXPECT_EQ(b.target_bytes[i], cfg.byte_length_table[static_cast<std::size_t>(b.targets[i])]);
  }
}

TEST(TokenLoader, CorruptTokenNamesFileAndOffset) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir("loader_corrupt");
  Stream s = make_stream(dir, rng, 600, 1);
  const std::size_t bad = 1 + rng() % 500;
  s.ids[bad] = 60000;  // beyond GPT-2's vocabulary
  write_token_shard(s.shards[0], s.ids);
  LoaderConfig cfg;
  cfg.shards = s.shards;
  cfg.batch_rows = 1;
  cfg.seq_len = 599;
  cfg.vocab_size = 50257;
  cfg.order = LoaderConfig::Order::sequential;
  TokenLoader loader(cfg);
  Batch b;
  try {
    loader.next(b);
    ADD_FAILURE() << "corrupt token not reported";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(s.shards[0].string()), std::string::npos) << what;
    EXPECT_NE(what.find("byte offset " + std::to_string(1024 + 2 * bad)), std::string::npos)
        << what;
  }
  // A sidecar whose count disagrees with its shard is refused at open.
  write_byte_length_file(byte_length_path(s.shards[0]), std::vector<std::uint8_t>(5, 1));
  EXPECT_THROW(TokenLoader{cfg}, Error);
}

TEST(TokenLoader, TooLittleDataForABatchIsAnError) {
  ScratchDir dir("loader_small");
  std::mt19937_64 rng(testing::fresh_seed());
  const Stream s = make_stream(dir, rng, 20, 1);
  LoaderConfig cfg;
  cfg.shards = s.shards;
  cfg.batch_rows = 4;
  cfg.seq_len = 8;
  EXPECT_THROW(TokenLoader{cfg}, Error);
  cfg.repeat = false;  // a one-pass loader takes what there is
  TokenLoader once(cfg);
  Batch b;
  ASSERT_TRUE(once.next(b));
  EXPECT_EQ(b.rows, 2);
  EXPECT_FALSE(once.next(b));
}

}  // namespace
}  // namespace fp8lab::data
