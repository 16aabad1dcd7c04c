// Opening a training run's checkpoint for inference (`fp8lab sample`, `fp8lab export`): the
// checkpoint directory and its meta.json, the model built from its config with its weights, and
// the tokenizer its tokens came from.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "fp8lab/backend.hpp"
#include "fp8lab/checkpoint.hpp"
#include "fp8lab/model.hpp"

namespace fp8lab {

struct InferenceCheckpoint {
  std::filesystem::path dir;  // the step_N directory
  CheckpointMeta meta;
};

// Resolves a run, checkpoints/ or step_N directory (resolve_checkpoint_dir) and reads meta.json.
// Checks, from the header alone, that model.safetensors was written for the model config
// meta.json records: weights copied in from another model config are an error naming each
// differing field, before anything else is read.
InferenceCheckpoint open_inference_checkpoint(const std::filesystem::path& where);

// The checkpoint's model (micro-batch 1, mixed compute, policy bf16) on `backend`, holding its
// weights, verified as load_checkpoint verifies them (file hashes, tensors, weight hash).
std::unique_ptr<GptModel> load_inference_model(const InferenceCheckpoint& checkpoint,
                                               Backend& backend);

// The tokenizer a run's tokens came from, "byte" or "gpt2": the one its data manifest names
// (data.kind shards, the manifest found next to data.train), else "byte" for data.kind bytes or a
// 256-token vocabulary, "gpt2" for a vocabulary of at least GPT-2's 50257 ids; empty when none
// fits (a synthetic stream over another vocabulary).
std::string run_tokenizer_name(const RunConfig& config);

}  // namespace fp8lab
