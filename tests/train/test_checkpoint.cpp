// Checkpoints: resume continues bit-identically, and foreign, corrupt or truncated checkpoints
// are clear errors.
#include "common/test_data.hpp"
#include "fp8lab/checkpoint.hpp"
#include "fp8lab/safetensors.hpp"
#include "fp8lab/trainer.hpp"
#include "train/run_log.hpp"
#include "train/train_fixtures.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

namespace fp8lab {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::quiet;

std::vector<float> train_uninterrupted(const RunConfig& c, const fs::path& dir) {
  auto be = make_cpu_backend();
  Trainer t(c, dir, *be, quiet());
  t.run();
  return t.model().get_parameters();
}

// Runs `stop` steps (the run ends with a checkpoint), then one more step whose metrics line is
// written but whose state is lost in a "crash" (the trainer is destroyed); then resumes in a new
// trainer on a new backend and runs to the end.
std::vector<float> train_interrupted(const RunConfig& c, const fs::path& dir, int stop) {
  {
    RunConfig first = c;
    first.train.steps = stop;
    first.optim.decay_steps = c.train.steps;  // the same schedule as the full run
    auto be = make_cpu_backend();
    Trainer t(first, dir, *be, quiet());
    t.run();
    append_metrics(dir / "metrics.jsonl", t.train_step(), 0);
  }
  auto be = make_cpu_backend();
  TrainerOptions o = quiet();
  o.resume = true;
  Trainer t(c, dir, *be, o);
  EXPECT_EQ(t.step(), stop);
  t.run();
  return t.model().get_parameters();
}

void expect_resume_is_bit_identical(const RunConfig& c) {
  TempDir a, b;
  const std::vector<float> straight = train_uninterrupted(c, a.path());
  const std::vector<float> resumed = train_interrupted(c, b.path(), 3);
  ASSERT_EQ(straight.size(), resumed.size());
  EXPECT_EQ(std::memcmp(straight.data(), resumed.data(), straight.size() * 4), 0)
      << policy_name(c.precision.policy);
  // Both runs end with the same recorded weights hash, and the resumed metrics hold one line
  // per step (the lost step's line was dropped on resume).
  auto read_json = [](const fs::path& p) { return nlohmann::json::parse(std::ifstream(p)); };
  EXPECT_EQ(read_json(a.path() / "run.json")["final_params_sha256"],
            read_json(b.path() / "run.json")["final_params_sha256"]);
  std::ifstream metrics(b.path() / "metrics.jsonl");
  std::string line;
  std::int64_t expect_step = 1;
  while (std::getline(metrics, line)) {
    EXPECT_EQ(nlohmann::json::parse(line)["step"].get<std::int64_t>(), expect_step++);
  }
  EXPECT_EQ(expect_step, c.train.steps + 1);
}

TEST(Checkpoint, ResumeIsBitIdenticalBf16) {
  RunConfig c = testing::small_run(testing::fresh_seed());
  expect_resume_is_bit_identical(c);
}

// bf16 moments go to the checkpoint as fp32 and come back exactly.
TEST(Checkpoint, ResumeIsBitIdenticalWithBf16Moments) {
  RunConfig c = testing::small_run(testing::fresh_seed());
  c.optim.moments = DType::bf16;
  expect_resume_is_bit_identical(c);
}

// bf16 gradients live within a step: a resume starts the next step's from nothing either way.
TEST(Checkpoint, ResumeIsBitIdenticalWithBf16Gradients) {
  RunConfig c = testing::small_run(testing::fresh_seed());
  c.precision.grads = DType::bf16;
  c.train.grad_accum = 2;
  expect_resume_is_bit_identical(c);
}

TEST(Checkpoint, ResumeIsBitIdenticalFp8MlpWithRecompute) {
  RunConfig c = testing::small_run(testing::fresh_seed());
  c.precision.policy = PrecisionPolicy::fp8_mlp;
  c.precision.mlp_recompute = true;
  c.optim.decay = "linear";
  expect_resume_is_bit_identical(c);
}

TEST(Checkpoint, WritesSafetensorsAndMetadataAndKeepsTheNewest) {
  RunConfig c = testing::small_run(testing::fresh_seed());
  c.train.checkpoint_every = 2;
  c.train.keep_checkpoints = 2;
  TempDir dir;
  auto be = make_cpu_backend();
  Trainer t(c, dir.path(), *be, quiet());
  t.run();
  const fs::path ckpts = dir.path() / "checkpoints";
  EXPECT_FALSE(fs::exists(ckpts / "step_00000002"));  // pruned
  EXPECT_TRUE(fs::exists(ckpts / "step_00000004"));
  ASSERT_EQ(latest_checkpoint(ckpts), ckpts / "step_00000006");
  const SafetensorsFile weights =
      SafetensorsFile::load(ckpts / "step_00000006" / "model.safetensors");
  EXPECT_EQ(weights.entries().size(), t.model().layout().params().size());
  const ParamInfo& fc = t.model().layout().find("blocks.1.mlp.fc.weight");
  const std::vector<float> params = t.model().get_parameters();
  EXPECT_EQ(std::memcmp(weights.tensor(fc.name, DType::f32, fc.shape), params.data() + fc.offset,
                        fc.numel() * 4),
            0);
  std::ifstream meta_in(ckpts / "step_00000006" / "meta.json");
  const std::string text((std::istreambuf_iterator<char>(meta_in)),
                         std::istreambuf_iterator<char>());
  const CheckpointMeta meta = parse_checkpoint_meta(text, "meta.json");
  EXPECT_EQ(meta.step, 6);
  EXPECT_EQ(meta.init_sha256, t.init_sha256());
  EXPECT_EQ(meta.config, c);
  EXPECT_EQ(meta.data_position["batches"], 6 * c.train.grad_accum);
  // No temp files or directories are left behind.
  for (const auto& e : fs::recursive_directory_iterator(ckpts)) {
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();
  }
}

class DamagedCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    config = testing::small_run(testing::fresh_seed());
    config.train.steps = 2;
    auto be = make_cpu_backend();
    Trainer t(config, dir.path(), *be, quiet());
    t.run();
    ckpt = *latest_checkpoint(dir.path() / "checkpoints");
  }
  void expect_load_error(const RunConfig& c, ErrorKind kind, const char* needle) {
    auto be = make_cpu_backend();
    GptModel model(c.model, c.precision, c.train.micro_batch, *be);
    try {
      load_checkpoint(ckpt, model, nullptr);
      ADD_FAILURE() << "loaded without error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
  RunConfig config;
  TempDir dir;
  fs::path ckpt;
};

TEST_F(DamagedCheckpoint, AnotherModelConfigIsNamed) {
  RunConfig other = config;
  other.model.d_model = 48;
  other.model.n_heads = 3;
  expect_load_error(other, ErrorKind::invalid_argument, "d_model: checkpoint 32 vs model 48");
}

TEST_F(DamagedCheckpoint, FlippedByteIsCorruption) {
  std::fstream f(ckpt / "model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
  // Every bit of one byte flipped: writing a fixed value instead left the file intact whenever
  // the random weights already had that byte there (1 seed in 256).
  f.seekg(-7, std::ios::end);
  const int byte = f.get();
  ASSERT_NE(byte, std::char_traits<char>::eof());
  f.seekp(-7, std::ios::end);
  f.put(static_cast<char>(~byte));
  f.close();
  expect_load_error(config, ErrorKind::format, "corrupt or truncated");
}

TEST_F(DamagedCheckpoint, TruncatedFileIsCorruption) {
  fs::resize_file(ckpt / "optimizer.safetensors",
                  fs::file_size(ckpt / "optimizer.safetensors") / 2);
  auto be = make_cpu_backend();
  GptModel model(config.model, config.precision, config.train.micro_batch, *be);
  AdamW adam(config.optim, model);
  EXPECT_THROW(load_checkpoint(ckpt, model, &adam), Error);
  fs::resize_file(ckpt / "meta.json", 100);
  expect_load_error(config, ErrorKind::format, "meta.json");
}

TEST_F(DamagedCheckpoint, ResumeWithoutCheckpointOrIntoAnExistingRunIsAnError) {
  TempDir empty;
  auto be = make_cpu_backend();
  TrainerOptions o = quiet();
  o.resume = true;
  EXPECT_THROW(Trainer(config, empty.path(), *be, o), Error);
  EXPECT_THROW(Trainer(config, dir.path(), *be, quiet()), Error);  // would overwrite a run
}

}  // namespace
}  // namespace fp8lab
