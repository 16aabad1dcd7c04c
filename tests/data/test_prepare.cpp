// `data prepare` / packs: document order, splits, filters, JSONL, determinism across thread
// counts, pack round trips, and typed errors for malformed JSONL and truncated packs.
#include <map>
#include <nlohmann/json.hpp>

#include "common/error_of.hpp"
#include "data_test_util.hpp"
#include "fp8lab/data_prepare.hpp"
#include "fp8lab/error.hpp"
#include "data/loader.hpp"
#include "core/sha256.hpp"
#include "data/shard.hpp"

namespace fp8lab::data {
namespace {

using testing::ScratchDir;

// A random source tree: name -> text (printable bytes plus some invalid UTF-8).
std::map<std::string, std::string> make_tree(const std::filesystem::path& root,
                                             std::mt19937_64& rng) {
  std::map<std::string, std::string> files;
  const std::vector<std::string> dirs = {"arch/x86", "kernel", "sound/core", "sound/pci", "sounds"};
  for (int i = 0; i < 40; ++i) {
    const std::string name = dirs[rng() % dirs.size()] + "/f" + std::to_string(rng() % 1000) +
                             (rng() % 4 == 0 ? ".txt" : ".c");
    std::string text = testing::random_bytes(rng, 1 + rng() % 700);
    files[name] = text;
  }
  for (const auto& [name, text] : files) {
    std::filesystem::create_directories((root / name).parent_path());
    testing::write_file(root / name, text);
  }
  return files;
}

std::string concat_tokens(const std::filesystem::path& dir, const std::string& split) {
  std::string out;
  for (const auto& shard : list_shards(dir / "manifest.json", split)) {
    for (std::int32_t id : read_token_shard(shard)) out += static_cast<char>(id);
  }
  return out;
}

PrepareOptions byte_options(const std::filesystem::path& in, const std::filesystem::path& out) {
  PrepareOptions o;
  o.tokenizer = "byte";
  o.source.inputs = {in};
  o.source.include_globs = {"*.c"};
  o.split.kind = "subtree";
  o.split.heldout_subtrees = {"sound"};
  o.out_dir = out;
  o.progress = false;
  return o;
}

TEST(DataPrepare, SubtreeSplitKeepsNameOrderAndFilters) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir("prep_subtree");
  const auto files = make_tree(dir / "src", rng);
  PrepareOptions o = byte_options(dir / "src", dir / "out");
  o.shard_tokens = 1 + static_cast<std::int64_t>(rng() % 3000);
  const PrepareSummary sum = prepare_corpus(o);
  std::string train, held;
  for (const auto& [name, text] : files) {
    if (!name.ends_with(".c")) continue;
    (name.starts_with("sound/") ? held : train) += text;  // "sounds/" is not under "sound"
  }
  EXPECT_EQ(concat_tokens(dir / "out", "train"), train);
  EXPECT_EQ(concat_tokens(dir / "out", "val"), held);
  EXPECT_EQ(sum.splits[0].bytes, static_cast<std::int64_t>(train.size()));
  EXPECT_EQ(sum.splits[0].shards,
            (static_cast<std::int64_t>(train.size()) + o.shard_tokens - 1) / o.shard_tokens);
  const auto m = nlohmann::json::parse(testing::read_file(dir / "out" / "manifest.json"));
  EXPECT_EQ(m["tokenizer"]["identity"], "byte:256");
  EXPECT_EQ(m["splits"]["train"]["tokens"].get<std::int64_t>(),
            static_cast<std::int64_t>(train.size()));
  for (const auto& shard : m["splits"]["train"]["shards"]) {
    EXPECT_EQ(shard["sha256"], sha256_file(dir / "out" / shard["file"].get<std::string>()));
  }
}

// The subtree split with an in-distribution split beside it: the subtree goes to val, the rest
// by the hash of its text to val_id or train; with fraction 0 the output is the plain subtree
// split's, byte for byte.
TEST(DataPrepare, InDistributionSplitHoldsOutAHashFractionOfTheRest) {
  ScratchDir dir("prep_in_distribution");
  std::mt19937_64 rng(testing::fresh_seed());
  const auto files = make_tree(dir / "src", rng);
  PrepareOptions o = byte_options(dir / "src", dir / "out");
  o.split.in_distribution_fraction = 0.4;
  const PrepareSummary sum = prepare_corpus(o);
  std::string train, held, in_dist;
  for (const auto& [name, text] : files) {
    if (!name.ends_with(".c") || text.empty()) continue;
    if (name.starts_with("sound/"))
      held += text;
    else
      (std::stoull(sha256_hex(text).substr(0, 16), nullptr, 16) * 0x1p-64 < 0.4 ? in_dist : train) +=
          text;
  }
  ASSERT_FALSE(in_dist.empty()) << "the random tree put nothing in the in-distribution split";
  EXPECT_EQ(concat_tokens(dir / "out", "train"), train);
  EXPECT_EQ(concat_tokens(dir / "out", "val"), held);
  EXPECT_EQ(concat_tokens(dir / "out", "val_id"), in_dist);
  ASSERT_EQ(sum.splits.size(), 3u);
  EXPECT_EQ(sum.splits[2].name, "val_id");
  const auto m = nlohmann::json::parse(testing::read_file(dir / "out" / "manifest.json"));
  EXPECT_EQ(m["split"]["in_distribution_fraction"].get<double>(), 0.4);
  EXPECT_EQ(m["splits"]["val_id"]["bytes"].get<std::int64_t>(),
            static_cast<std::int64_t>(in_dist.size()));

  PrepareOptions plain = byte_options(dir / "src", dir / "plain");
  prepare_corpus(plain);
  plain.out_dir = dir / "zero";
  plain.split.in_distribution_fraction = 0.0;
  prepare_corpus(plain);
  EXPECT_EQ(testing::read_file(dir / "plain" / "manifest.json"),
            testing::read_file(dir / "zero" / "manifest.json"));
}

TEST(DataPrepare, AnInDistributionSplitNeedsTheSubtreeSplitAndItsOwnName) {
  ScratchDir dir("prep_in_distribution_bad");
  PrepareOptions o = byte_options(dir / "src", dir / "out");
  o.split.in_distribution_fraction = 0.1;
  o.split.in_distribution_name = "val";
  EXPECT_NE(fp8lab::testing::error_of([&] { prepare_corpus(o); }).find("must differ"), std::string::npos);
  o.split = SplitSpec{};
  o.split.in_distribution_fraction = 0.1;
  EXPECT_NE(fp8lab::testing::error_of([&] { prepare_corpus(o); }).find("needs the subtree split"), std::string::npos);
  o.split.kind = "subtree";
  o.split.heldout_subtrees = {"sound"};
  o.split.in_distribution_fraction = 1.0;
  EXPECT_NE(fp8lab::testing::error_of([&] { prepare_corpus(o); }).find("in-distribution fraction 1"), std::string::npos);
}

TEST(DataPrepare, HashSplitIsDeterministicAcrossThreadCountsAndMatchesAPack) {
  FP8LAB_REQUIRE_GPT2(tok);
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir("prep_hash");
  make_tree(dir / "src", rng);
  PrepareOptions o = byte_options(dir / "src", dir / "a");
  o.tokenizer = "gpt2";
  o.split = SplitSpec{};
  o.split.heldout_fraction = 0.3;
  o.threads = 1;
  prepare_corpus(o);
  o.out_dir = dir / "b";
  o.threads = 4;
  prepare_corpus(o);
  EXPECT_EQ(testing::read_file(dir / "a" / "manifest.json"),
            testing::read_file(dir / "b" / "manifest.json"));
  // Via a pack: the same documents, hence the same document list and shards.
  PackOptions p;
  p.source = o.source;
  p.out = dir / "x.fp8pack";
  p.level = 3;
  p.progress = false;
  const PackSummary ps = write_pack(p);
  EXPECT_GT(ps.documents, 0);
  o.source.inputs = {p.out};
  o.out_dir = dir / "c";
  prepare_corpus(o);
  const auto a = nlohmann::json::parse(testing::read_file(dir / "a" / "manifest.json"));
  const auto c = nlohmann::json::parse(testing::read_file(dir / "c" / "manifest.json"));
  EXPECT_EQ(a["sources"]["document_list_sha256"], c["sources"]["document_list_sha256"]);
  EXPECT_EQ(a["splits"], c["splits"]);
  // Every document starts with <|endoftext|>: count them in the shards.
  std::int64_t eots = 0;
  for (const std::string split : {"train", "val"}) {
    for (const auto& s : list_shards(dir / "c" / "manifest.json", split)) {
      for (std::int32_t id : read_token_shard(s)) eots += id == 50256;
    }
  }
  EXPECT_EQ(eots, a["sources"]["documents"].get<std::int64_t>());
}

TEST(DataPrepare, PackRoundTripsFilesAndRejectsTruncation) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir("pack");
  const auto files = make_tree(dir / "src", rng);
  PackOptions p;
  p.source.inputs = {dir / "src"};
  p.out = dir / "t.fp8pack";
  p.level = 1;
  p.progress = false;
  write_pack(p);
  EXPECT_EQ(unpack_to_directory(p.out, dir / "un"), static_cast<std::int64_t>(files.size()));
  for (const auto& [name, text] : files) EXPECT_EQ(testing::read_file(dir / "un" / name), text);
  const std::string bytes = testing::read_file(p.out);
  testing::write_file(dir / "cut.fp8pack", bytes.substr(0, bytes.size() - 5));
  EXPECT_THROW(unpack_to_directory(dir / "cut.fp8pack", dir / "un2"), Error);
  // A budget samples whole documents: at least the budget, never everything here.
  p.budget_bytes = 3000;
  p.out = dir / "small.fp8pack";
  const PackSummary s = write_pack(p);
  EXPECT_GE(s.bytes, 3000);
  EXPECT_LT(s.documents, static_cast<std::int64_t>(files.size()));
}

TEST(DataPrepare, JsonlDocumentsAndLineNumberedErrors) {
  ScratchDir dir("jsonl");
  testing::write_file(dir / "c.jsonl",
                      "{\"text\": \"first\"}\n\n{\"text\": \"s\\u00e9cond\", \"id\": 2}\n");
  PrepareOptions o;
  o.tokenizer = "byte";
  o.source.inputs = {dir / "c.jsonl"};
  o.split.heldout_fraction = 0;
  o.out_dir = dir / "out";
  o.progress = false;
  const PrepareSummary s = prepare_corpus(o);
  EXPECT_EQ(s.documents, 2);
  EXPECT_EQ(concat_tokens(dir / "out", "train"),
            "firsts\xC3\xA9"
            "cond");
  testing::write_file(dir / "bad.jsonl", "{\"text\": \"ok\"}\n{\"txt\": 1}\n");
  o.source.inputs = {dir / "bad.jsonl"};
  try {
    prepare_corpus(o);
    ADD_FAILURE() << "malformed JSONL accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl line 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fp8lab::data
