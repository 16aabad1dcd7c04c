// The trainer's token sources: next-token targets, deterministic positions that seek back, and
// the shard source over the data loader.
#include "common/test_data.hpp"
#include "data/shard.hpp"
#include "fp8lab/trainer.hpp"
#include "train/train_fixtures.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace fp8lab {
namespace {

namespace fs = std::filesystem;

// Writes <dir>/{train,val}_000000.bin (+ .bytes sidecars) of random tokens below `vocab`.
void write_shards(const fs::path& dir, std::uint64_t seed, std::int32_t vocab) {
  for (const char* split : {"train", "val"}) {
    std::vector<std::int32_t> ids(split[0] == 't' ? 3000 : 700);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      ids[i] = static_cast<std::int32_t>(random_u32(seed, stream_id(split), i) % vocab);
    }
    const fs::path shard = dir / (std::string(split) + "_000000.bin");
    data::write_token_shard(shard, ids);
    data::write_byte_length_file(data::byte_length_path(shard),
                                 std::vector<std::uint8_t>(ids.size(), 1));
  }
}

using Rows = std::pair<std::vector<std::int32_t>, std::vector<std::int32_t>>;

Rows next_batch(TokenSource& s, const RunConfig& c) {
  Rows r;
  r.first.assign(static_cast<std::size_t>(c.train.micro_batch * c.model.seq_len), -7);
  r.second.assign(r.first.size(), -7);
  s.next(r.first.data(), r.second.data());
  return r;
}

// Targets are the next tokens; positions seek back to the same batches; rewind restarts.
void check_source(const RunConfig& c) {
  auto a = make_token_source(c, "train");
  for (int i = 0; i < 3; ++i) next_batch(*a, c);
  const nlohmann::json pos = a->position();
  const Rows fourth = next_batch(*a, c);
  const std::int64_t t = c.model.seq_len;
  for (std::int64_t r = 0; r < c.train.micro_batch; ++r) {
    for (std::int64_t i = 0; i + 1 < t; ++i) {
      ASSERT_EQ(fourth.second[r * t + i], fourth.first[r * t + i + 1]) << c.data.kind;
    }
  }
  for (std::int32_t tok : fourth.first) ASSERT_TRUE(tok >= 0 && tok < c.model.vocab_size);
  auto b = make_token_source(c, "train");
  b->seek(pos);
  EXPECT_EQ(next_batch(*b, c), fourth) << c.data.kind;
  b->rewind();
  a->rewind();
  EXPECT_EQ(next_batch(*a, c), next_batch(*b, c));
  EXPECT_NE(next_batch(*a, c), next_batch(*make_token_source(c, "val"), c)) << "val differs";
  EXPECT_THROW(b->seek(nlohmann::json{{"kind", "elsewhere"}}), Error);
  EXPECT_THROW(b->seek(nlohmann::json{{"kind", 5}, {"batches", 1}}), Error);  // not a type_error
  EXPECT_THROW(b->seek(nlohmann::json::array({1})), Error);
}

TEST(TokenSources, Synthetic) {
  RunConfig c = testing::small_run(testing::fresh_seed());
  check_source(c);
  // Seven tokens in eight follow the rule t[i] = (5 t[i-1] + 3 t[i-2] + 7) mod V; the eighth is
  // uniformly random (and follows the rule by chance 1 time in V). Over 64 batches (1,792
  // positions) the followed fraction is 0.877 with a standard deviation of 0.008, so a bound of
  // +-0.055 (7 sigma) fails only if the noise rate is wrong, never by chance (a single batch of
  // 28 positions, the test's first form, fell below its bound in ~5% of seeds).
  auto source = make_token_source(c, "train");
  int follow = 0, total = 0;
  for (int batch = 0; batch < 64; ++batch) {
    const Rows rows = next_batch(*source, c);
    for (std::size_t i = 2; i < rows.first.size(); ++i) {
      if (i % c.model.seq_len < 2) continue;
      ++total;
      follow += rows.first[i] ==
                (5 * rows.first[i - 1] + 3 * rows.first[i - 2] + 7) % c.model.vocab_size;
    }
  }
  const double expected = 7.0 / 8.0 + 1.0 / (8.0 * static_cast<double>(c.model.vocab_size));
  EXPECT_NEAR(static_cast<double>(follow) / total, expected, 0.055) << follow << " of " << total;
}

TEST(TokenSources, BytesOfATextFile) {
  testing::TempDir dir;
  RunConfig c = testing::small_run(testing::fresh_seed());
  c.model.vocab_size = 256;
  c.data.kind = "bytes";
  c.data.train = (dir.path() / "text.txt").string();
  std::string text;
  for (int i = 0; i < 4000; ++i)
    text += static_cast<char>('a' + random_u32(c.train.data_seed, 1, i) % 26);
  std::ofstream(c.data.train) << text;
  check_source(c);
  c.model.vocab_size = 64;
  EXPECT_THROW(make_token_source(c, "train"), Error);  // bytes need a 256-token vocabulary
  // A device is refused before it is read (it used to be read until memory ran out).
  c.model.vocab_size = 256;
  c.data.train = "/dev/zero";
  try {
    make_token_source(c, "train");
    ADD_FAILURE() << "/dev/zero read as a text file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
  }
}

TEST(TokenSources, ShardsThroughTheLoader) {
  testing::TempDir dir;
  RunConfig c = testing::small_run(testing::fresh_seed());
  write_shards(dir.path(), c.train.data_seed, static_cast<std::int32_t>(c.model.vocab_size));
  c.data.kind = "shards";
  c.data.train = dir.path().string();
  c.data.val = dir.path().string();
  check_source(c);
}

// A run on shards resumes bit-identically: the loader position travels in the checkpoint.
TEST(TokenSources, ShardRunResumesBitIdentically) {
  testing::TempDir data, straight, resumed;
  RunConfig c = testing::small_run(testing::fresh_seed());
  write_shards(data.path(), c.train.data_seed, static_cast<std::int32_t>(c.model.vocab_size));
  c.data.kind = "shards";
  c.data.train = data.path().string();
  TrainerOptions quiet;
  quiet.log = nullptr;
  std::vector<float> expected;
  {
    auto be = make_cpu_backend();
    Trainer t(c, straight.path(), *be, quiet);
    t.run();
    expected = t.model().get_parameters();
  }
  {
    RunConfig first = c;
    first.train.steps = 2;
    auto be = make_cpu_backend();
    Trainer t(first, resumed.path(), *be, quiet);
    t.run();
  }
  TrainerOptions resume = quiet;
  resume.resume = true;
  auto be = make_cpu_backend();
  Trainer t(c, resumed.path(), *be, resume);
  t.run();
  const std::vector<float> got = t.model().get_parameters();
  EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size() * 4), 0);
}

}  // namespace
}  // namespace fp8lab
