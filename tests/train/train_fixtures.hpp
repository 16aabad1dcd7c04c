// Run configs for the trainer tests: small models on the synthetic stream, seconds each.
#pragma once

#include "fp8lab/config.hpp"
#include "fp8lab/trainer.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>

namespace fp8lab::testing {

// d 32, 4d 128, M = micro_batch * T = 2 * 16: every FP8 GEMM dimension a multiple of 16.
inline RunConfig small_run(std::uint64_t seed) {
  RunConfig c = run_preset("tiny");
  c.backend = "cpu";  // what these runs are handed (the preset's "auto" is recorded as that)
  c.model.vocab_size = 64, c.model.d_model = 32, c.model.n_layers = 2, c.model.n_heads = 2;
  c.model.seq_len = 16;
  c.train.micro_batch = 2;
  c.train.grad_accum = 2;
  c.train.steps = 6;
  c.train.seed = seed;
  c.train.data_seed = seed ^ 0x5eed;
  c.train.loss_chunk_rows = 12;  // several chunks per micro-batch
  c.optim.warmup_steps = 2;
  c.optim.decay_steps = 6;
  c.optim.lr = 3e-3f, c.optim.min_lr = 3e-4f;
  c.optim.clip_grad_norm = 0.5f;  // small enough that clipping really happens
  return c;
}

// A fresh, empty directory under the system temp dir, removed at destruction.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("fp8lab-test-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Trainer options that log nothing (tests read metrics.jsonl and run.json instead).
inline TrainerOptions quiet() {
  TrainerOptions o;
  o.log = nullptr;
  return o;
}

}  // namespace fp8lab::testing
