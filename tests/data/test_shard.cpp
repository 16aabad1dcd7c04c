// Token shards: byte-exact llm.c layout both ways, and truncated/corrupt files as typed errors
// that name the file and the byte offset.
#include <cstdio>
#include <cstring>

#include "data_test_util.hpp"
#include "fp8lab/error.hpp"
#include "core/sha256.hpp"
#include "data/shard.hpp"

namespace fp8lab::data {
namespace {

using testing::ScratchDir;

std::vector<std::int32_t> random_ids(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::int32_t> ids(n);
  for (auto& id : ids) id = static_cast<std::int32_t>(rng() % 50257);
  return ids;
}

// What llm.c's data scripts do: a 256-int32 header (magic, version, count) then uint16 tokens.
void write_like_llmc(const std::filesystem::path& path, const std::vector<std::int32_t>& ids) {
  std::int32_t header[256];
  std::memset(header, 0, sizeof(header));
  header[0] = 20240520;
  header[1] = 1;
  header[2] = static_cast<std::int32_t>(ids.size());
  std::vector<std::uint16_t> toks(ids.begin(), ids.end());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(header, sizeof(std::int32_t), 256, f);
  std::fwrite(toks.data(), sizeof(std::uint16_t), toks.size(), f);
  std::fclose(f);
}

TEST(ShardFormat, WritesTheLlmcLayoutByteForByte) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir("shard");
  const auto ids = random_ids(rng, 1 + rng() % 5000);
  const std::string sha = write_token_shard(dir / "ours.bin", ids);
  write_like_llmc(dir / "llmc.bin", ids);
  const std::string ours = testing::read_file(dir / "ours.bin");
  EXPECT_EQ(ours, testing::read_file(dir / "llmc.bin"));
  EXPECT_EQ(ours.size(), 1024 + 2 * ids.size());
  EXPECT_EQ(sha, sha256_hex(ours));
  EXPECT_EQ(read_token_shard(dir / "llmc.bin"), ids);
}

TEST(ShardFormat, ReadByAnIndependentPythonReader) {
  if (std::system("python3 -c 'import hashlib' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 not available";
  }
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir("shardpy");
  const auto ids = random_ids(rng, 2 + rng() % 3000);
  write_token_shard(dir / "x.bin", ids);
  const std::string out_path = (dir / "out.txt").string();
  const std::string cmd = "python3 " + testing::source_path("tests/data/read_llmc_shard.py") + " " +
                          (dir / "x.bin").string() + " > " + out_path;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<std::uint16_t> payload(ids.begin(), ids.end());
  const std::string expected =
      std::to_string(ids.size()) + " " + sha256_hex(payload.data(), payload.size() * 2) + " " +
      std::to_string(ids.front()) + " " + std::to_string(ids.back()) + "\n";
  EXPECT_EQ(testing::read_file(out_path), expected);
}

TEST(ShardFormat, ByteLengthSidecarRoundTrips) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir("sidecar");
  std::vector<std::uint8_t> lengths(1 + rng() % 4000);
  for (auto& l : lengths) l = static_cast<std::uint8_t>(rng());
  EXPECT_EQ(byte_length_path(dir / "train_000003.bin"), dir / "train_000003.bytes");
  write_byte_length_file(dir / "a.bytes", lengths);
  EXPECT_EQ(read_byte_length_file(dir / "a.bytes"), lengths);
  EXPECT_THROW(read_token_shard(dir / "a.bytes"), Error);  // wrong magic for a token shard
}

void expect_format_error(const std::filesystem::path& path, const std::string& needle) {
  try {
    MappedShard shard(path, MappedShard::Kind::tokens);
    ADD_FAILURE() << "opened " << path << " without error; expected '" << needle << "'";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::format) << what;
    EXPECT_NE(what.find(path.string()), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

TEST(ShardFormat, TruncatedAndCorruptShardsNameFileAndOffset) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir("corrupt");
  const auto ids = random_ids(rng, 100 + rng() % 1000);
  const auto good = dir / "good.bin";
  write_token_shard(good, ids);
  const std::string bytes = testing::read_file(good);

  testing::write_file(dir / "cut.bin", bytes.substr(0, bytes.size() - 1));
  expect_format_error(dir / "cut.bin", "truncated");
  expect_format_error(dir / "cut.bin", "byte offset " + std::to_string(bytes.size() - 1));
  testing::write_file(dir / "header.bin", bytes.substr(0, 1000));
  expect_format_error(dir / "header.bin", "shorter than its 1024-byte header");
  std::string magic = bytes;
  magic[0] ^= 0x5A;
  testing::write_file(dir / "magic.bin", magic);
  expect_format_error(dir / "magic.bin", "bad magic");
  expect_format_error(dir / "magic.bin", "byte offset 0");
  std::string version = bytes;
  version[4] = 7;
  testing::write_file(dir / "version.bin", version);
  expect_format_error(dir / "version.bin", "byte offset 4");
  testing::write_file(dir / "trailing.bin", bytes + "x");
  expect_format_error(dir / "trailing.bin",
                      "trailing bytes from byte offset " + std::to_string(bytes.size()));
  try {
    MappedShard missing(dir / "missing.bin", MappedShard::Kind::tokens);
    ADD_FAILURE() << "opened a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
  }
}

TEST(ShardFormat, RejectsIdsThatDoNotFitUint16) {
  ScratchDir dir("wide");
  const std::vector<std::int32_t> ids = {5, 65536};
  EXPECT_THROW(write_token_shard(dir / "w.bin", ids), Error);
}

}  // namespace
}  // namespace fp8lab::data
