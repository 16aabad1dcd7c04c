// Checkpoints: weights and optimizer moments in safetensors, everything else in meta.json.
//
//   <run>/checkpoints/step_00000120/model.safetensors      parameters, names of ParameterLayout
//   <run>/checkpoints/step_00000120/optimizer.safetensors  exp_avg.<name>, exp_avg_sq.<name>
//   <run>/checkpoints/step_00000120/meta.json              config, step, data position, ...
//   <run>/checkpoints/latest                               "step_00000120"
//
// Crash safety: a checkpoint is written into step_N.tmp/ (each file fsynced), the directory is
// renamed to step_N and the parent fsynced; only then is `latest` replaced (temp file, fsync,
// rename, fsync). A kill at any moment leaves `latest` pointing at a complete checkpoint. Saving a
// step again while `latest` names step_N installs it as step_N.1 (and the next time as step_N
// again): the directory `latest` names is removed only after `latest` has moved.
// docs/checkpoint-format.md documents the layout for PyTorch users.
#pragma once

#include "fp8lab/config.hpp"
#include "fp8lab/model.hpp"
#include "fp8lab/optimizer.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

namespace fp8lab {

// Writes `size` bytes to `path` atomically: temp file in the same directory, fsync, rename,
// fsync of the directory. Throws ErrorKind::io naming the path and errno text.
void write_file_atomic(const std::filesystem::path& path, const void* data, std::size_t size);
void fsync_directory(const std::filesystem::path& dir);

struct CheckpointMeta {
  std::int64_t step = 0;           // optimizer steps completed (skipped steps included)
  std::int64_t adam_updates = 0;   // AdamW's t
  std::int64_t skipped_steps = 0;  // non-finite steps skipped so far
  std::string init_sha256;         // hash of the initial weights of the run
  std::string params_sha256;       // hash of the weights saved here
  RunConfig config;
  nlohmann::json data_position;  // the training data source's position (source-specific)
  std::uint64_t init_seed = 0,
                data_seed = 0;  // the run's RNG state: both generators are
                                // counter-based (Philox), so seeds + position suffice
  std::string model_sha256, optimizer_sha256;  // SHA-256 of the two safetensors files
};

nlohmann::json to_json(const CheckpointMeta& meta);
// Strict parse of meta.json text; `source` names the file in errors (ErrorKind::format).
CheckpointMeta parse_checkpoint_meta(std::string_view text, std::string_view source);
// Reads and parses checkpoint_dir/meta.json (ErrorKind::io when it cannot be read). When the
// directory is named step_N[.K], N must equal the metadata's step (ErrorKind::format).
CheckpointMeta read_checkpoint_meta(const std::filesystem::path& checkpoint_dir);

// The step a checkpoint directory name stands for: "step_00000120" and "step_00000120.1" -> 120;
// nullopt for any other name (at least 8 digits, then nothing or '.' and digits).
std::optional<std::int64_t> checkpoint_dir_step(std::string_view name);

// The checkpoint directories in checkpoints_dir (names checkpoint_dir_step accepts) with their
// steps, sorted by step, then path.
std::vector<std::pair<std::int64_t, std::filesystem::path>> list_checkpoint_dirs(
    const std::filesystem::path& checkpoints_dir);

// The name `latest` in checkpoints_dir holds, unvalidated; empty when there is no `latest`.
std::string read_latest_name(const std::filesystem::path& checkpoints_dir);

// Before a model is allocated from a checkpoint's config: the config must be valid and its
// parameters must fit the checkpoint's model.safetensors, so that an edited meta.json cannot make
// fp8lab allocate more than the files on disk justify (ErrorKind::format / io).
void check_weights_fit_file(const std::filesystem::path& checkpoint_dir, const ModelConfig& config);

// Saves model + optimizer + meta as checkpoints_dir/step_<meta.step> (or step_<step>.1, above),
// updates `latest`, and removes older checkpoints beyond `keep` (never the one `latest` names)
// and other directories of the same step. Returns its directory.
std::filesystem::path save_checkpoint(const std::filesystem::path& checkpoints_dir, GptModel& model,
                                      const AdamW& optimizer, const CheckpointMeta& meta,
                                      std::int64_t keep);
// The same with the moments given as host vectors of parameter_count() elements (data
// parallelism gathers a sharded optimizer's moments first; the file does not depend on sharding).
std::filesystem::path save_checkpoint(const std::filesystem::path& checkpoints_dir, GptModel& model,
                                      std::vector<float> exp_avg, std::vector<float> exp_avg_sq,
                                      const CheckpointMeta& meta, std::int64_t keep);

// A checkpoint in host memory: everything save_checkpoint writes, taken from the model at one
// step, so that it can be written without the model (the trainer writes it on another thread
// while training goes on).
struct CheckpointSnapshot {
  std::filesystem::path checkpoints_dir;
  ModelConfig model_config;
  std::vector<ParamInfo> params;                    // the layout: names, shapes, offsets
  std::vector<float> weights, exp_avg, exp_avg_sq;  // parameter_count() each
  CheckpointMeta meta;
  std::int64_t keep = 1;
};
CheckpointSnapshot snapshot_checkpoint(const std::filesystem::path& checkpoints_dir,
                                       GptModel& model, std::vector<float> exp_avg,
                                       std::vector<float> exp_avg_sq, const CheckpointMeta& meta,
                                       std::int64_t keep);
// Writes a snapshot as save_checkpoint does (the same bytes) and returns its directory.
std::filesystem::path write_checkpoint(const CheckpointSnapshot& snapshot);

// The directory `latest` names, or nullopt when there is no checkpoint yet.
std::optional<std::filesystem::path> latest_checkpoint(
    const std::filesystem::path& checkpoints_dir);

// Loads a checkpoint into `model` (and `optimizer` when given; a sharded optimizer takes its
// shard of the moments, so a checkpoint loads at any world size). Throws fp8lab::Error when the
// checkpoint's model config differs from the model's (naming the fields), when a file is
// missing, truncated or corrupt (hash mismatch, bad safetensors), or a tensor is missing.
CheckpointMeta load_checkpoint(const std::filesystem::path& checkpoint_dir, GptModel& model,
                               AdamW* optimizer);

// Weights alone: one safetensors file with the model config in its __metadata__.
void save_weights(const std::filesystem::path& file, GptModel& model);
void load_weights(const std::filesystem::path& file, GptModel& model);

}  // namespace fp8lab
