// fp8lab eval's library core: a checkpoint scored on held-out shards. It must reproduce the
// trainer's validation loss under the same batching, score every row of the split exactly once,
// and name bad arguments.
#include "fp8lab/error.hpp"
#include "fp8lab/backend.hpp"
#include "fp8lab/model.hpp"
#include "fp8lab/checkpoint.hpp"
#include "fp8lab/evaluate.hpp"
#include "data/shard.hpp"
#include "fp8lab/trainer.hpp"
#include "train/train_fixtures.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <memory>

namespace fp8lab {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

constexpr std::int32_t kSpecial = 7;  // plays <|endoftext|>: byte length 0, excluded

// A token stream with learnable structure (a noisy counter) and a special token every ~50 tokens.
void write_split(const fs::path& dir, const std::string& split, std::int64_t n, std::uint32_t seed) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
  std::vector<std::uint8_t> bytes(ids.size());
  std::uint32_t state = seed;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    std::int32_t t = static_cast<std::int32_t>((i + (state >> 29)) % 64);
    if ((state >> 8) % 50 == 0) t = kSpecial;
    ids[i] = t;
    bytes[i] = t == kSpecial ? 0 : static_cast<std::uint8_t>(1 + t % 3);
  }
  const fs::path shard = dir / (split + "_000000.bin");
  data::write_token_shard(shard, ids);
  data::write_byte_length_file(data::byte_length_path(shard), bytes);
}

// Trains the fixtures' small model on shards (sequential order, so validation batches are the
// split's first batches) with validation at the last step; returns its directories.
struct TrainedRun {
  TempDir dir;
  RunConfig config;
  fs::path data() const { return dir.path() / "data"; }
  fs::path run() const { return dir.path() / "run"; }
};

std::unique_ptr<TrainedRun> train_small_run(const std::string& policy) {
  auto r = std::make_unique<TrainedRun>();
  fs::create_directories(r->data());
  write_split(r->data(), "train", 4000, 11);
  write_split(r->data(), "val", 16 * 25 + 1, 12);  // 25 rows of T = 16: batches of 2 leave one
  RunConfig c = testing::small_run(5);
  c.precision.policy = parse_policy(policy);
  c.data.kind = "shards";
  c.data.train = r->data().string();
  c.data.order = "sequential";
  c.train.ignore_index = kSpecial;
  c.train.eval_every = c.train.steps;
  c.train.eval_batches = 3;
  r->config = c;
  auto backend = make_cpu_backend();
  Trainer trainer(c, r->run(), *backend, testing::quiet());
  trainer.run();
  return r;
}

double final_val_loss(const fs::path& run) {
  std::ifstream in(run / "run.json");
  return nlohmann::json::parse(in).at("final_val_loss").get<double>();
}

EvalOptions options_for(const TrainedRun& r, const std::string& policy) {
  EvalOptions o;
  o.backend = "cpu";  // the runs were trained there; auto would take a GPU when there is one
  o.checkpoint = r.run();
  o.policy = policy;
  o.data = r.data();
  o.exclude_token = std::to_string(kSpecial);
  return o;
}

TEST(Evaluate, ReproducesTheTrainersValidationLoss) {
  for (const std::string policy : {"bf16", "fp8-mlp"}) {
    auto r = train_small_run(policy);
    EvalOptions o = options_for(*r, policy);
    o.batch_rows = r->config.train.micro_batch;
    o.max_batches = r->config.train.eval_batches;
    const EvalReport report = evaluate_checkpoint(o);
    EXPECT_NEAR(report.metrics.ce_nats, final_val_loss(r->run()), 1e-12) << policy;
    EXPECT_EQ(report.batches, 3);
    EXPECT_EQ(report.step, r->config.train.steps);
    EXPECT_EQ(report.excluded_token, kSpecial);
  }
}

// --average-last: the mean of the last checkpoints' weights, element by element, is what is
// scored; one checkpoint is the plain score; too few kept is an error naming the remedy.
TEST(Evaluate, AveragesTheWeightsOfTheLastCheckpoints) {
  auto r = std::make_unique<TrainedRun>();
  fs::create_directories(r->data());
  write_split(r->data(), "train", 4000, 11);
  write_split(r->data(), "val", 16 * 25 + 1, 12);
  RunConfig c = testing::small_run(5);
  c.data.kind = "shards";
  c.data.train = r->data().string();
  c.train.ignore_index = kSpecial;
  c.train.checkpoint_every = 1;
  c.train.keep_checkpoints = 3;
  auto backend = make_cpu_backend();
  Trainer(c, r->run(), *backend, testing::quiet()).run();

  EvalOptions o = options_for(*r, "bf16");
  o.average_last = 3;
  const EvalReport averaged = evaluate_checkpoint(o);
  const std::int64_t s = c.train.steps;
  EXPECT_EQ(averaged.averaged_steps, (std::vector<std::int64_t>{s - 2, s - 1, s}));
  EXPECT_EQ(averaged.to_json().at("averaged_steps"), nlohmann::json({s - 2, s - 1, s}));

  // The reference: each checkpoint's weights read on their own, their mean in double.
  PrecisionConfig p;
  GptModel model(c.model, p, c.train.micro_batch, *backend);
  std::vector<double> sum;
  for (std::int64_t step : {s - 2, s - 1, s}) {
    load_checkpoint(r->run() / "checkpoints" / fmt::format("step_{:08d}", step), model, nullptr);
    const std::vector<float> w = model.get_parameters();
    sum.resize(w.size(), 0.0);
    for (std::size_t i = 0; i < w.size(); ++i) sum[i] += w[i];
  }
  std::vector<float> mean(sum.size());
  for (std::size_t i = 0; i < sum.size(); ++i) mean[i] = static_cast<float>(sum[i] / 3.0);
  model.set_parameters(mean);
  EXPECT_EQ(averaged.params_sha256, model.parameter_sha256());

  o.average_last = 1;
  const EvalReport last = evaluate_checkpoint(o);
  EXPECT_EQ(last.averaged_steps, (std::vector<std::int64_t>{s}));
  EXPECT_NE(last.params_sha256, averaged.params_sha256);
  EXPECT_NE(last.metrics.ce_nats, averaged.metrics.ce_nats);

  o.average_last = 4;
  try {
    evaluate_checkpoint(o);
    FAIL() << "averaged 4 checkpoints where 3 are kept";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("train.keep_checkpoints >= 4"), std::string::npos) << e.what();
  }
}

TEST(Evaluate, ScoresEveryRowOnceWhateverTheBatchSize) {
  auto r = train_small_run("bf16");
  EvalOptions o = options_for(*r, "bf16");
  o.batch_rows = 2;  // 25 rows: 12 full batches and one padded
  const EvalReport by2 = evaluate_checkpoint(o);
  o.batch_rows = 5;  // 5 full batches
  const EvalReport by5 = evaluate_checkpoint(o);
  EXPECT_EQ(by2.rows, 25);
  EXPECT_EQ(by2.batches, 13);
  EXPECT_EQ(by5.batches, 5);
  EXPECT_EQ(by2.metrics.targets_total, 25 * 16);
  EXPECT_EQ(by2.metrics.targets_total, by5.metrics.targets_total);
  EXPECT_EQ(by2.metrics.targets_counted, by5.metrics.targets_counted);
  EXPECT_GT(by2.metrics.targets_excluded, 0);
  EXPECT_EQ(by2.metrics.bytes_counted, by5.metrics.bytes_counted);
  // Per-row results do not depend on the batch (bf16 has no batch-wide scale), up to the fp32
  // GEMM blocking: a relative 1e-6 is far below any difference worth reporting.
  EXPECT_NEAR(by2.metrics.ce_nats, by5.metrics.ce_nats, 1e-6 * by5.metrics.ce_nats);
  EXPECT_NEAR(by2.metrics.bits_per_byte,
              by2.metrics.loss_sum_nats / std::log(2.0) / static_cast<double>(by2.metrics.bytes_counted),
              1e-12);
  // The same weights scored under fp8-mlp: close to bf16 but computed differently.
  o.policy = "fp8-mlp";
  const EvalReport fp8 = evaluate_checkpoint(o);
  EXPECT_EQ(fp8.params_sha256, by5.params_sha256);
  EXPECT_NE(fp8.metrics.loss_sum_nats, by5.metrics.loss_sum_nats);
  EXPECT_NEAR(fp8.metrics.ce_nats, by5.metrics.ce_nats, 0.05 * by5.metrics.ce_nats);
}

TEST(Evaluate, BadArgumentsAreNamed) {
  auto r = train_small_run("bf16");
  auto expect_error = [&](EvalOptions o, const std::string& fragment) {
    try {
      evaluate_checkpoint(o);
      FAIL() << "no error, expected one mentioning " << fragment;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  EvalOptions o = options_for(*r, "bf16");
  o.checkpoint = r->dir.path() / "missing";
  expect_error(o, "does not exist");
  o = options_for(*r, "bf16");
  o.checkpoint = r->data();  // exists, but holds no checkpoint
  expect_error(o, "neither a checkpoint");
  o = options_for(*r, "bf16");
  o.exclude_token = "64";
  expect_error(o, "outside the vocabulary");
  o.exclude_token = "seven";
  expect_error(o, "--exclude-token");
  o = options_for(*r, "bf16");
  o.policy = "fp4";
  expect_error(o, "fp4");
  o = options_for(*r, "bf16");
  o.order = "random";
  expect_error(o, "random");
}

// Shards without .bytes sidecars (as llm.c writes them): the byte lengths follow from the
// tokenizer the vocabulary names (64 <= 256: the byte tokenizer, one byte per token).
TEST(Evaluate, ShardsWithoutSidecarsTakeByteLengthsFromTheTokenizer) {
  const auto r = train_small_run("bf16");
  EvalOptions o = options_for(*r, "bf16");
  const EvalReport with = evaluate_checkpoint(o);
  fs::remove(r->data() / "val_000000.bytes");
  const EvalReport without = evaluate_checkpoint(o);
  EXPECT_EQ(without.metrics.ce_nats, with.metrics.ce_nats);
  EXPECT_EQ(without.metrics.targets_counted, with.metrics.targets_counted);
  EXPECT_EQ(without.metrics.bytes_counted, without.metrics.targets_counted);
}

// meta.json is checked before anything is allocated from it: a model its weights file cannot
// hold (here d_model 2^17, the largest a config may name: hundreds of GB of parameters) is an
// error, not an allocation.
TEST(Evaluate, AModelLargerThanItsWeightsFileIsRefusedBeforeAllocation) {
  const auto r = train_small_run("bf16");
  const fs::path ckpt = resolve_checkpoint_dir(r->run());
  nlohmann::json meta = nlohmann::json::parse(std::ifstream(ckpt / "meta.json"));
  meta["config"]["model"]["d_model"] = 1 << 17;
  meta["config"]["model"]["n_heads"] = 1;
  std::ofstream(ckpt / "meta.json", std::ios::trunc) << meta.dump();
  try {
    evaluate_checkpoint(options_for(*r, "bf16"));
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::format) << e.what();
    EXPECT_NE(std::string(e.what()).find("larger than its"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fp8lab
