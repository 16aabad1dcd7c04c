// Run configuration: presets, JSON round trip, strict --set overrides, validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "common/error_of.hpp"
#include "fp8lab/config.hpp"
#include "fp8lab/error.hpp"
#include "train/train_fixtures.hpp"

namespace fp8lab {
namespace {

TEST(RunConfig, PresetsMatchTheStudyShapes) {
  EXPECT_EQ(run_preset("gpt50m").backend, "auto");  // the GPU when there is one
  EXPECT_EQ(RunConfig{}.backend, "auto");
  const ModelConfig m = model_preset("gpt50m");
  EXPECT_EQ(m.d_model, 512);
  EXPECT_EQ(m.n_layers, 8);
  EXPECT_EQ(m.n_heads, 8);
  EXPECT_EQ(m.vocab_size, 50304);
  EXPECT_EQ(m.seq_len, 2048);
  EXPECT_EQ(model_preset("gpt350m").d_model, 1024);
  EXPECT_EQ(model_preset("gpt350m").n_layers, 24);
  EXPECT_EQ(model_preset("gpt1.3b").d_model, 2048);
  EXPECT_EQ(model_preset("gpt1.3b").n_heads, 16);
  try {
    model_preset("gpt7b");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("gpt7b"), std::string::npos);
  }
}

TEST(RunConfig, JsonRoundTripIsExact) {
  RunConfig c = testing::small_run(77);
  c.precision.policy = PrecisionPolicy::fp8_linears;
  c.optim.decay = "linear";
  c.data.train = "some/where.bin";
  EXPECT_EQ(run_config_from_json(to_json(c)), c);
  EXPECT_EQ(to_json(c)["optim"]["lr"].dump(), "0.003");  // fp32 fields print shortest
  // Each memory option round-trips, and a config written before the option existed (a run to
  // --resume) reads it as off.
  for (const MemoryOption& m : kMemoryOptions) {
    c.precision.*m.on = true;
    EXPECT_EQ(run_config_from_json(to_json(c)), c) << m.key;
    nlohmann::json old = to_json(c);
    old["precision"].erase(std::string(m.key));
    EXPECT_FALSE(run_config_from_json(old).precision.*m.on) << m.key;
  }
}

// The rebuilt sum saves only where the branch it keeps is narrower than the f32 sum: compute
// fp32 refuses the key, naming it and the compute it needs.
TEST(RunConfig, ResidualRecomputeNeedsMixedCompute) {
  RunConfig c = run_preset("tiny");
  apply_override(c, "precision.residual_recompute=true");
  EXPECT_NO_THROW(c.validate());
  apply_override(c, "precision.compute=fp32");
  const std::string message = testing::error_of([&] { c.validate(); });
  EXPECT_NE(message.find("precision.residual_recompute"), std::string::npos) << message;
  EXPECT_NE(message.find("compute mixed, not fp32"), std::string::npos) << message;
}

// bf16 gradients round-trip, read as fp32 from a config written before the key existed, take
// only fp32 or bf16, and need compute mixed (the fp32 reference keeps fp32 gradients).
TEST(RunConfig, Bf16GradientsRoundTripAndNeedMixedCompute) {
  RunConfig c = run_preset("tiny");
  apply_override(c, "precision.grads=bf16");
  EXPECT_EQ(c.precision.grads, DType::bf16);
  EXPECT_EQ(to_json(c)["precision"]["grads"], "bf16");
  EXPECT_EQ(run_config_from_json(to_json(c)), c);
  nlohmann::json old = to_json(c);
  old["precision"].erase("grads");
  EXPECT_EQ(run_config_from_json(old).precision.grads, DType::f32);
  EXPECT_NO_THROW(c.validate());
  const std::string bad = testing::error_of([&] { apply_override(c, "precision.grads=fp16"); });
  EXPECT_NE(bad.find("precision.grads 'fp16' must be fp32 or bf16"), std::string::npos) << bad;
  apply_override(c, "precision.compute=fp32");
  const std::string message = testing::error_of([&] { c.validate(); });
  EXPECT_NE(message.find("precision.grads=bf16"), std::string::npos) << message;
  EXPECT_NE(message.find("compute mixed, not fp32"), std::string::npos) << message;
}

// The weights cast from the master are FP8 linears' weights: under bf16 the key is refused,
// naming it and the policies it needs.
TEST(RunConfig, Fp8WeightsFromMasterNeedsAnFp8Policy) {
  RunConfig c = run_preset("tiny");
  apply_override(c, "precision.fp8_weights_from_master=true");
  const std::string message = testing::error_of([&] { c.validate(); });
  EXPECT_NE(message.find("precision.fp8_weights_from_master"), std::string::npos) << message;
  EXPECT_NE(message.find("fp8-mlp or fp8-linears, not bf16"), std::string::npos) << message;
  apply_override(c, "precision.policy=fp8-mlp");
  EXPECT_NO_THROW(c.validate());
}

// --lean-memory turns on the memory options that apply to the config as resolved: all of them
// for FP8 linears under compute mixed, no weights from the master under bf16, no residual
// recompute under compute fp32; every result validates, and nothing else changes.
TEST(RunConfig, LeanMemoryTurnsOnWhatApplies) {
  RunConfig c = run_preset("tiny");
  apply_override(c, "precision.policy=fp8-linears");
  RunConfig lean = c;
  enable_lean_memory(lean);
  EXPECT_TRUE(lean.precision.mlp_recompute && lean.precision.pointwise_recompute &&
              lean.precision.residual_recompute && lean.precision.qkv_recompute &&
              lean.precision.fp8_weights_from_master);
  EXPECT_NO_THROW(lean.validate());
  lean.precision = c.precision;
  EXPECT_EQ(lean, c);  // only the memory options moved
  RunConfig bf16 = run_preset("tiny");
  enable_lean_memory(bf16);
  EXPECT_TRUE(bf16.precision.residual_recompute && bf16.precision.qkv_recompute);
  EXPECT_FALSE(bf16.precision.fp8_weights_from_master);
  EXPECT_NO_THROW(bf16.validate());
  RunConfig fp32 = run_preset("tiny");
  apply_override(fp32, "precision.compute=fp32");
  enable_lean_memory(fp32);
  EXPECT_TRUE(fp32.precision.mlp_recompute);
  EXPECT_FALSE(fp32.precision.residual_recompute);
  EXPECT_NO_THROW(fp32.validate());
}

TEST(RunConfig, OverridesAreTypedAndStrict) {
  RunConfig c = run_preset("tiny");
  apply_override(c, "optim.lr=3e-4");
  apply_override(c, "precision.policy=fp8-mlp");
  apply_override(c, "precision.mlp_recompute=true");
  apply_override(c, "precision.pointwise_recompute=true");
  apply_override(c, "train.steps=17");
  apply_override(c, "data.train=/tmp/x y.txt");  // strings are taken verbatim
  EXPECT_FLOAT_EQ(c.optim.lr, 3e-4f);
  EXPECT_EQ(c.precision.policy, PrecisionPolicy::fp8_mlp);
  EXPECT_TRUE(c.precision.mlp_recompute);
  EXPECT_TRUE(c.precision.pointwise_recompute);
  EXPECT_EQ(c.train.steps, 17);
  EXPECT_EQ(c.data.train, "/tmp/x y.txt");
  EXPECT_THROW(apply_override(c, "optim.lrr=1"), Error);           // unknown key
  EXPECT_THROW(apply_override(c, "train.steps=1.5"), Error);       // float for an integer
  EXPECT_THROW(apply_override(c, "train.steps=many"), Error);      // not a number
  EXPECT_THROW(apply_override(c, "precision.policy=fp4"), Error);  // unknown policy
  EXPECT_THROW(apply_override(c, "optim"), Error);                 // no '='
  {
    RunConfig bad = c;  // checked once all overrides are in (validate), like every value
    apply_override(bad, "backend=gpu");
    EXPECT_THROW(bad.validate(), Error);  // auto, cpu or cuda
  }
  apply_override(c, "backend=cuda");
  EXPECT_EQ(c.backend, "cuda");
  // An integer for a boolean key.
  EXPECT_THROW(apply_override(c, "precision.pointwise_recompute=1"), Error);
  try {
    apply_override(c, "train.nonfinte=skip");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("train.nonfinte"), std::string::npos) << e.message();
  }
}

// cudnn-forward is two requests, one per direction; every other family is itself in both.
TEST(RunConfig, CudnnForwardAsksForCudnnForwardAndAutoBackward) {
  EXPECT_EQ(attention_kernels_for(AttentionKernels::cudnn_forward, true), AttentionKernels::cudnn);
  EXPECT_EQ(attention_kernels_for(AttentionKernels::cudnn_forward, false),
            AttentionKernels::automatic);
  for (AttentionKernels k :
       {AttentionKernels::automatic, AttentionKernels::mma_sync, AttentionKernels::wgmma,
        AttentionKernels::wgmma_ws, AttentionKernels::cudnn})
    for (bool forward : {true, false}) EXPECT_EQ(attention_kernels_for(k, forward), k);
}

// The kernel families are part of the run's configuration (written to run.json), chosen by
// name; a run.json written before the section existed reads as auto.
TEST(RunConfig, KernelFamiliesAreConfigNotEnvironment) {
  RunConfig c = run_preset("tiny");
  EXPECT_EQ(c.kernels.attention, AttentionKernels::automatic);
  EXPECT_EQ(to_json(c)["kernels"]["attention"], "auto");
  for (const char* name : {"mma-sync", "wgmma", "wgmma-ws", "cudnn", "cudnn-forward", "auto"}) {
    apply_override(c, std::string("kernels.attention=") + name);
    EXPECT_STREQ(attention_kernels_name(c.kernels.attention), name);
    EXPECT_EQ(run_config_from_json(to_json(c)), c);
  }
  apply_override(c, "kernels.attention=wgmma");
  nlohmann::json old = to_json(c);
  old.erase("kernels");
  EXPECT_EQ(run_config_from_json(old).kernels.attention, AttentionKernels::automatic);
  try {
    apply_override(c, "kernels.attention=flash3");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("'flash3'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("mma-sync, wgmma, wgmma-ws, cudnn or cudnn-forward"),
              std::string::npos)
        << e.message();
  }
  EXPECT_EQ(c.kernels.attention, AttentionKernels::wgmma);  // a refused value changes nothing
}

TEST(RunConfig, FilesStartFromTheirPresetAndRejectUnknownKeys) {
  testing::TempDir dir;
  const auto path = dir.path() / "run.json";
  std::ofstream(path) << R"({"preset": "gpt50m", "train": {"steps": 5}, "optim": {"lr": 0.01}})";
  const RunConfig c = load_run_config(path);
  EXPECT_EQ(c.model, model_preset("gpt50m"));
  EXPECT_EQ(c.train.steps, 5);
  EXPECT_FLOAT_EQ(c.optim.lr, 0.01f);
  std::ofstream(path) << R"({"train": {"stepz": 5}})";
  EXPECT_THROW(load_run_config(path), Error);
  std::ofstream(path) << R"({"train": )";
  EXPECT_THROW(load_run_config(path), Error);
  EXPECT_THROW(load_run_config(dir.path() / "missing.json"), Error);
}

// Overrides are checked as a whole: validity never depends on the order of --set options.
TEST(RunConfig, ValidationFollowsAllOverridesInAnyOrder) {
  const std::vector<std::string> sets = {"optim.lr=1e-5", "optim.min_lr=1e-4", "optim.lr=1e-3",
                                         "model.n_heads=5", "model.n_heads=4"};
  std::vector<std::string> order = sets;
  std::sort(order.begin(), order.end());
  do {
    RunConfig c = run_preset("tiny");
    for (const std::string& s : order) apply_override(c, s);  // no error midway
    if (c.optim.lr >= c.optim.min_lr && c.model.n_heads == 4) {
      EXPECT_NO_THROW(c.validate());
    } else {
      EXPECT_THROW(c.validate(), Error);
    }
  } while (std::next_permutation(order.begin(), order.end()));
  RunConfig c = run_preset("tiny");
  apply_override(c, "model.n_heads=5");  // 128 % 5 != 0: found by validate, not by the override
  EXPECT_THROW(c.validate(), Error);
}

TEST(RunConfig, OutOfRangeNumbersAreRefusedNamingTheKey) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"train.steps=-1", "train.steps"},
      {"optim.eps=0", "optim.eps"},
      {"optim.eps=-1e-8", "optim.eps"},
      {"optim.lr=1e39", "optim.lr"},
      {"optim.weight_decay=-0.1", "weight_decay"},
      {"optim.clip_grad_norm=-1", "clip_grad_norm"},
      {"optim.warmup_steps=-3", "warmup_steps"},
      {"train.log_every=-1", "log_every"},
      {"train.keep_checkpoints=-2", "keep_checkpoints"},
      {"train.loss_chunk_rows=0", "loss_chunk_rows"},
      {"train.loss_chunk_rows=4294967296", "loss_chunk_rows"},
      {"train.ignore_index=-7", "ignore_index"},
      {"train.micro_batch=100000000", "micro_batch"},
      {"model.norm_eps=1e39", "norm_eps"}};
  for (const auto& [set, key] : bad) {
    RunConfig c = run_preset("tiny");
    apply_override(c, set);
    try {
      c.validate();
      ADD_FAILURE() << set << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find(key), std::string::npos) << set << ": " << e.message();
    }
  }
}

}  // namespace
}  // namespace fp8lab
