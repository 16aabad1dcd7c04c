// Scoring a checkpoint on held-out token shards: `fp8lab eval`.
//
// The checkpoint's weights are loaded into a model built under the policy asked for (which need
// not be the policy it was trained with: the study scores every arm under its own policy and
// under bf16). The held-out shards are read once, in order, in batches of `batch_rows` rows of
// seq_len tokens (the loader's packing: consecutive rows of T+1 tokens overlapping by one); a short
// last batch is padded with ignored targets, so every row of the split is scored exactly once.
// Metrics come from eval::EvalAccumulator: CE excluding the special token, PPL, bits per byte.
#pragma once

#include "fp8lab/eval_metrics.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fp8lab {

struct EvalOptions {
  std::filesystem::path checkpoint;  // a run dir, its checkpoints/ dir, or one step_N dir
  std::string policy;                // bf16 | fp8-mlp | fp8-linears
  // The FP8 recipe of the policy's FP8 linears; empty: the one the checkpoint was trained with.
  std::string fp8_recipe;
  std::filesystem::path data;        // .bin, directory of <split>_*.bin, or a manifest.json
  std::string split = "val";
  std::int64_t batch_rows = 0;       // 0: the checkpoint's train.micro_batch
  std::int64_t max_batches = 0;      // 0: the whole split
  std::string order = "sequential";  // sequential | shuffled (shuffled uses `seed`)
  std::uint64_t seed = 1;
  // The target excluded from the score; "auto": <|endoftext|> (50256) for GPT-2-sized vocabularies
  // (vocab > 50256), none for byte-level models.
  std::string exclude_token = "auto";
  std::string backend = "auto";  // auto | cpu | cuda (choose_backend)
  bool progress = false;  // a progress line on stderr
  // > 1: score the mean of the weights of the last this-many checkpoints up to the resolved one
  // (by step; the run must keep them: train.keep_checkpoints), a cheaper stand-in for an average
  // of the iterates that damps the last steps' noise.
  std::int64_t average_last = 1;
};

struct EvalReport {
  eval::EvalMetrics metrics;
  std::string checkpoint_dir;
  std::string params_sha256;  // of the weights scored
  std::string policy;
  std::string fp8_recipe;  // the recipe the FP8 linears ran (tensorwise for bf16)
  std::int64_t step = 0;
  std::vector<std::int64_t> averaged_steps;  // the checkpoints averaged (one: just `step`)
  std::int64_t batch_rows = 0, seq_len = 0, batches = 0, rows = 0;
  std::optional<std::int32_t> excluded_token;
  std::string order;
  nlohmann::json to_json() const;
};

// Resolves `where` to a step_N checkpoint directory (following `latest`); throws naming the path.
std::filesystem::path resolve_checkpoint_dir(const std::filesystem::path& where);

EvalReport evaluate_checkpoint(const EvalOptions& options);

}  // namespace fp8lab
