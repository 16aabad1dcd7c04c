// The training loop: a tiny model overfits a repeated batch, gradient accumulation equals one
// big batch, the non-finite policy, the run directory's files, and fp8 policies tracking bf16.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include "common/test_data.hpp"
#include "fp8lab/fp8_recipe.hpp"
#include "fp8lab/trainer.hpp"
#include "model/model_fixtures.hpp"
#include "train/train_fixtures.hpp"

namespace fp8lab {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::quiet;

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(std::ifstream(p)); }

// Every line of RUN/metrics.jsonl.
std::vector<nlohmann::json> read_metrics(const fs::path& run_dir) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(run_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST(Trainer, TinyModelOverfitsARepeatedBatch) {
  const std::uint64_t seed = testing::fresh_seed();
  RunConfig c = testing::small_run(seed);
  auto be = make_cpu_backend();
  GptModel model(c.model, c.precision, c.train.micro_batch, *be);
  model.init_parameters(seed);
  OptimConfig o = c.optim;
  o.weight_decay = 0.f;
  AdamW adam(o, model);
  const std::int64_t m = c.train.micro_batch * c.model.seq_len;
  const auto inputs = testing::random_tokens(m, c.model.vocab_size, seed, 1);
  const auto targets = testing::random_tokens(m, c.model.vocab_size, seed, 2);
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    model.zero_grads();
    last = model.forward_backward(inputs.data(), targets.data(), 1.f / m, -1, 16).loss_sum / m;
    if (step == 0) first = last;
    adam.step(2e-2f);
    model.refresh_working_weights();
  }
  EXPECT_NEAR(first, std::log(64.0), 0.3);  // starts near uniform
  EXPECT_LT(last, 0.1) << "random targets can only be learnt by memorising the batch";
}

TEST(Trainer, GradientAccumulationEqualsOneLargeBatch) {
  const std::uint64_t seed = testing::fresh_seed();
  RunConfig a = testing::small_run(seed);
  a.precision.compute = ComputeMode::fp32;
  a.train.steps = 1;
  a.train.micro_batch = 2, a.train.grad_accum = 2;
  RunConfig b = a;
  b.train.micro_batch = 4, b.train.grad_accum = 1;  // the synthetic stream numbers rows globally
  TempDir da, db;
  auto be_a = make_cpu_backend(), be_b = make_cpu_backend();
  Trainer ta(a, da.path(), *be_a, quiet()), tb(b, db.path(), *be_b, quiet());
  const StepRecord ra = ta.train_step(), rb = tb.train_step();
  EXPECT_NEAR(ra.loss, rb.loss, 1e-6 * rb.loss);
  EXPECT_NEAR(ra.grad_norm, rb.grad_norm, 1e-5 * rb.grad_norm);
  // Compare gradients, not weights: Adam's first update divides g by |g| and so amplifies the
  // summation-order differences of near-zero gradients.
  const auto ga = ta.model().get_gradients(), gb = tb.model().get_gradients();
  EXPECT_LT(testing::relative_frobenius(std::vector<double>(ga.begin(), ga.end()),
                                        std::vector<double>(gb.begin(), gb.end())),
            1e-5);
}

void poison_embeddings(Trainer& t) {
  const ParamInfo& wte = t.model().layout().find("wte.weight");
  float* p = t.model().master().as<float>() + wte.offset;  // CPU backend: host memory
  for (std::int64_t i = 0; i < wte.numel(); ++i) p[i] = std::numeric_limits<float>::quiet_NaN();
  t.model().refresh_working_weights();
}

TEST(Trainer, NonFiniteAbortNamesTheStepAndTensor) {
  RunConfig c = testing::small_run(testing::fresh_seed());
  TempDir dir;
  auto be = make_cpu_backend();
  Trainer t(c, dir.path(), *be, quiet());
  t.train_step();
  poison_embeddings(t);
  try {
    t.train_step();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::non_finite);
    EXPECT_NE(e.message().find("step 2"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("blocks.0.attn.qkv"), std::string::npos) << e.message();
  }
}

TEST(Trainer, NonFiniteSkipCountsAndLeavesTheWeights) {
  RunConfig c = testing::small_run(testing::fresh_seed());
  c.train.nonfinite = "skip";
  TempDir dir;
  auto be = make_cpu_backend();
  Trainer t(c, dir.path(), *be, quiet());
  t.train_step();
  poison_embeddings(t);
  const std::vector<float> before = t.model().get_parameters();
  const StepRecord r = t.train_step();
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(t.skipped_steps(), 1);
  EXPECT_EQ(t.step(), 2);
  EXPECT_EQ(t.optimizer().updates(), 1);
  const std::vector<float> after = t.model().get_parameters();
  EXPECT_EQ(std::memcmp(before.data(), after.data(), before.size() * 4), 0);  // NaN bytes too
}

TEST(Trainer, RunDirectoryHoldsConfigRecordMetricsAndValidation) {
  RunConfig c = testing::small_run(testing::fresh_seed());
  c.train.eval_every = 3;
  c.train.eval_batches = 2;
  c.backend = "auto";  // recorded as the backend the run was handed
  TempDir dir;
  auto be = make_cpu_backend();
  Trainer t(c, dir.path(), *be, quiet());
  t.run();
  c.backend = "cpu";
  EXPECT_EQ(run_config_from_json(read_json(dir.path() / "config.json")), c);
  const auto record = read_json(dir.path() / "run.json");
  EXPECT_EQ(record["status"], "completed");
  EXPECT_EQ(record["init_sha256"], t.init_sha256());
  EXPECT_EQ(record["parameter_count"], t.model().parameter_count());
  EXPECT_EQ(record["final_params_sha256"], t.model().parameter_sha256());
  EXPECT_EQ(record["device"], be->device_name());
  EXPECT_TRUE(be->device_name().ends_with(" threads)")) << be->device_name();
  // The build's commit ("<40 hex>", maybe " dirty"), or "unknown dirty" outside a git checkout.
  const std::string commit = record["source_commit"];
  const std::size_t hex = std::min(commit.find_first_not_of("0123456789abcdef"), commit.size());
  EXPECT_TRUE(commit.starts_with("unknown") ||
              (hex == 40 && (commit.size() == 40 || commit.substr(40) == " dirty")))
      << commit;
  int lines = 0;
  for (const nlohmann::json& j : read_metrics(dir.path())) {
    ++lines;
    EXPECT_EQ(j["step"], lines);
    for (const char* key : {"loss", "lr", "grad_norm", "tokens_per_s", "peak_mib"}) {
      EXPECT_TRUE(j.contains(key) && j[key].is_number() && std::isfinite(j[key].get<double>()))
          << key;
    }
    EXPECT_EQ(j.contains("val_loss"), lines % 3 == 0) << j.dump();
  }
  EXPECT_EQ(lines, 6);
  // The same validation batches every time: evaluating twice gives the same number.
  EXPECT_EQ(t.validation_loss(), t.validation_loss());
}

// A run of `c` whose precision.`key` is `on`: its metrics and final weights' SHA-256, with the
// key checked in the run's config and record.
struct OptionRun {
  std::vector<nlohmann::json> metrics;
  std::string final_sha;
};
OptionRun train_with_option(RunConfig c, const char* key, bool on) {
  TempDir dir;
  auto be = make_cpu_backend();
  Trainer t(c, dir.path(), *be, quiet());
  t.run();
  const auto record = read_json(dir.path() / "run.json");
  EXPECT_EQ(record[key], on) << key;
  EXPECT_EQ(read_json(dir.path() / "config.json")["precision"][key], on) << key;
  return {read_metrics(dir.path()), record["final_params_sha256"]};
}

// An option that must not change a bit: the same final weights and per-step metrics (the loss,
// lr and grad_norm bits) with it as without, and a lower peak at every step.
void expect_same_training_lower_peak(const OptionRun& off_run, const OptionRun& on_run,
                                     const std::string& label) {
  EXPECT_EQ(off_run.final_sha, on_run.final_sha) << label;
  ASSERT_EQ(off_run.metrics.size(), on_run.metrics.size()) << label;
  ASSERT_FALSE(off_run.metrics.empty());
  for (std::size_t s = 0; s < off_run.metrics.size(); ++s) {
    nlohmann::json off = off_run.metrics[s], on = on_run.metrics[s];
    EXPECT_LT(on["peak_mib"].get<double>(), off["peak_mib"].get<double>()) << label;
    for (nlohmann::json* j : {&off, &on}) {
      j->erase("tokens_per_s");  // the only fields allowed to differ
      j->erase("peak_mib");
    }
    EXPECT_EQ(off, on) << label << ", step " << s + 1;
  }
}

// Pointwise recompute over whole training steps (accumulation, clipping, AdamW): the same
// metrics bits and final weights as keeping the activations, a lower peak, and the option in the
// run's config and record.
TEST(Trainer, PointwiseRecomputeTrainsIdentically) {
  const std::uint64_t seed = testing::fresh_seed();
  for (const bool mlp_recompute : {false, true}) {
    OptionRun runs[2];
    for (int pointwise = 0; pointwise < 2; ++pointwise) {
      RunConfig c = testing::small_run(seed);
      c.precision.mlp_recompute = mlp_recompute;
      c.precision.pointwise_recompute = pointwise == 1;
      runs[pointwise] = train_with_option(c, "pointwise_recompute", pointwise == 1);
    }
    expect_same_training_lower_peak(runs[0], runs[1],
                                    mlp_recompute ? "with MLP recompute" : "without MLP recompute");
  }
}

// Residual recompute over whole training steps, alone and with MLP and pointwise recompute (ln2
// rebuilt in the same pass): the same metrics bits and final weights as keeping the sums, a
// lower peak, and the option in the run's config and record.
TEST(Trainer, ResidualRecomputeTrainsIdentically) {
  const std::uint64_t seed = testing::fresh_seed();
  for (const bool other_recomputes : {false, true}) {
    OptionRun runs[2];
    for (int rebuild = 0; rebuild < 2; ++rebuild) {
      RunConfig c = testing::small_run(seed);
      c.model.n_layers = 4;  // a saving needs more than two blocks (one shared sum is added)
      c.precision.mlp_recompute = other_recomputes;
      c.precision.pointwise_recompute = other_recomputes;
      c.precision.residual_recompute = rebuild == 1;
      runs[rebuild] = train_with_option(c, "residual_recompute", rebuild == 1);
    }
    expect_same_training_lower_peak(
        runs[0], runs[1], other_recomputes ? "with MLP and pointwise recompute" : "alone");
  }
}

// qkv recompute over whole training steps, bf16 and FP8 (the recomputed FP8 qkv casting with the
// forward's scales): the same metrics bits and final weights as keeping q, k and v, a lower peak,
// and the option in the run's config and record.
TEST(Trainer, QkvRecomputeTrainsIdentically) {
  const std::uint64_t seed = testing::fresh_seed();
  for (const PrecisionPolicy policy : {PrecisionPolicy::bf16, PrecisionPolicy::fp8_linears}) {
    OptionRun runs[2];
    for (int rebuild = 0; rebuild < 2; ++rebuild) {
      RunConfig c = testing::small_run(seed);
      c.model.n_layers = 3;
      c.precision.policy = policy;
      c.precision.qkv_recompute = rebuild == 1;
      runs[rebuild] = train_with_option(c, "qkv_recompute", rebuild == 1);
    }
    expect_same_training_lower_peak(runs[0], runs[1], policy_name(policy));
  }
}

// FP8 linears that cast W from the fp32 master (precision.fp8_weights_from_master) over whole
// training steps (accumulation, clipping, AdamW writing no working copy for those weights, MLP
// recompute casting again): the same metrics bits and final weights as with the working copy,
// a lower peak, and the option in the run's config and record.
TEST(Trainer, Fp8WeightsFromMasterTrainIdentically) {
  const std::uint64_t seed = testing::fresh_seed();
  struct Case {
    PrecisionPolicy policy;
    Fp8Recipe recipe;
    bool mlp_recompute;
  };
  for (const Case k : {Case{PrecisionPolicy::fp8_mlp, Fp8Recipe::tensorwise, false},
                       Case{PrecisionPolicy::fp8_linears, Fp8Recipe::tensorwise, true},
                       Case{PrecisionPolicy::fp8_linears, Fp8Recipe::rowwise, false}}) {
    OptionRun runs[2];
    for (int from_master = 0; from_master < 2; ++from_master) {
      RunConfig c = testing::small_run(seed);
      c.precision.policy = k.policy;
      c.precision.fp8.recipe = k.recipe;
      c.precision.mlp_recompute = k.mlp_recompute;
      c.precision.fp8_weights_from_master = from_master == 1;
      runs[from_master] = train_with_option(c, "fp8_weights_from_master", from_master == 1);
    }
    expect_same_training_lower_peak(runs[0], runs[1],
                                    std::string(policy_name(k.policy)) + " " +
                                        fp8_recipe_name(k.recipe) +
                                        (k.mlp_recompute ? " with MLP recompute" : ""));
  }
}

// Over a few steps from the same weights on the same batches, the fp8 policies' losses stay
// within a documented bound of bf16's: 0.5% relative per step (measured: ~0.03%).
TEST(Trainer, Fp8PoliciesTrackBf16OverAFewSteps) {
  const std::uint64_t seed = testing::fresh_seed();
  std::vector<double> reference;
  for (PrecisionPolicy policy :
       {PrecisionPolicy::bf16, PrecisionPolicy::fp8_mlp, PrecisionPolicy::fp8_linears}) {
    RunConfig c = testing::small_run(seed);
    c.precision.policy = policy;
    c.train.steps = 8;
    c.optim.decay_steps = 8;
    TempDir dir;
    auto be = make_cpu_backend();
    Trainer t(c, dir.path(), *be, quiet());
    std::vector<double> losses;
    for (int s = 0; s < 8; ++s) losses.push_back(t.train_step().loss);
    if (reference.empty()) {
      reference = losses;
      continue;
    }
    double worst = 0;
    for (int s = 0; s < 8; ++s) worst = std::max(worst, std::fabs(losses[s] / reference[s] - 1));
    std::fprintf(stderr, "%s: worst per-step loss deviation from bf16 %.5f\n", policy_name(policy),
                 worst);
    EXPECT_LT(worst, 0.005) << policy_name(policy);
  }
}

}  // namespace
}  // namespace fp8lab
