// The `fp8lab bench model` tests' small configuration.
#pragma once

#include <string>
#include <vector>

#include "fp8lab/bench_model.hpp"

namespace fp8lab::testing {

// A frozen-only bench of the tiny preset on the CPU backend, one repeat.
inline ModelBenchConfig tiny_cpu_bench(const std::vector<std::string>& arms) {
  ModelBenchConfig c;
  c.backend = "cpu";
  c.preset = "tiny";
  c.batch = 2;
  c.seq_len = 32;
  c.warmup = 0;
  c.warmup_s = 0;
  c.repeats = 1;
  c.train_step = false;
  c.loss_chunk_rows = 64;
  for (const std::string& arm : arms) c.arms.push_back(parse_model_bench_arm(arm));
  return c;
}

}  // namespace fp8lab::testing
