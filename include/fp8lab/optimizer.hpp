// AdamW over the model's contiguous parameter buffer, the learning-rate schedule, and the global
// gradient norm.
#pragma once

#include "fp8lab/backend.hpp"
#include "fp8lab/config.hpp"
#include "fp8lab/distributed.hpp"
#include "fp8lab/model.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace fp8lab {

// Learning rate for the update at 0-based `step`: linear warmup over warmup_steps (reaching lr at
// step warmup_steps - 1), then cosine or linear decay to min_lr at decay_steps (train_steps when
// 0), then min_lr. "constant" stays at lr after the warmup.
float learning_rate(const OptimConfig& optim, std::int64_t train_steps, std::int64_t step);

// sum of squares of each parameter's gradient, in layout order (f64).
std::vector<double> gradient_sums_of_squares(GptModel& model);

class AdamW {
 public:
  // Moments are allocated through the model's backend (MemoryKind::optimizer) and zeroed.
  AdamW(const OptimConfig& optim, GptModel& model);
  // ZeRO-1: moments for the slice `shard` of the flat parameter buffer only; step() updates only
  // the parameters in that slice (data parallelism all-gathers the rest from their owners).
  AdamW(const OptimConfig& optim, GptModel& model, Shard shard);

  // Does weight decay apply to this parameter (matrices always; norms and embeddings per config)?
  bool decays(const ParamInfo& p) const;
  // One update of every parameter with the current gradients, each first multiplied by
  // grad_scale (the norm clip; 1: none). Where writes_working_copy(), the same pass also writes
  // the model's bf16 working weights (the bits refresh_working_weights() would write).
  void step(float lr, float grad_scale = 1.f);
  // True when step() leaves the working copy fresh: the optimizer holds every parameter (a ZeRO-1
  // shard leaves the other ranks' parameters to the all-gather and a full refresh).
  bool writes_working_copy() const { return holds_all(); }

  std::int64_t updates() const { return updates_; }  // Adam's t (skipped steps do not count)
  void set_updates(std::int64_t t) { updates_ = t; }
  // The moments of the shard: numel() == shard().size(), dtype optim.moments (f32 or bf16).
  TensorView m() const { return m_.view(); }
  TensorView v() const { return v_.view(); }
  // The shard's moments as fp32 host values (checkpoints hold fp32 whatever the dtype), and
  // back: set_moments takes shard().size() values each and rounds them to the moments' dtype
  // (exact for values that came from it).
  std::vector<float> m_host() const;
  std::vector<float> v_host() const;
  void set_moments(const float* m, const float* v);
  // One parameter's moments; only for an optimizer that holds every parameter.
  TensorView m(const ParamInfo& p) const;
  TensorView v(const ParamInfo& p) const;
  const Shard& shard() const { return shard_; }
  bool holds_all() const { return shard_ == Shard{0, model_.parameter_count()}; }

 private:
  OptimConfig optim_;
  GptModel& model_;
  Shard shard_;
  Buffer m_, v_;
  std::int64_t updates_ = 0;
};

}  // namespace fp8lab
