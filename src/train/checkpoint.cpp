// Checkpoint save/load (see fp8lab/checkpoint.hpp and docs/checkpoint-format.md).
#include "fp8lab/checkpoint.hpp"

#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"
#include "fp8lab/safetensors.hpp"
#include "core/sha256.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace fp8lab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Names every field in which two model configs differ.
void check_same_model(const ModelConfig& saved, const ModelConfig& current,
                      const std::string& source) {
  const json a = to_json(saved), b = to_json(current);
  std::string diffs;
  for (const auto& [key, value] : a.items()) {
    if (value != b.at(key))
      diffs += fmt::format(" {}: checkpoint {} vs model {};", key, json_excerpt(value),
                           json_excerpt(b.at(key)));
  }
  FP8LAB_CHECK(diffs.empty(), "checkpoint '{}' was made for another model config:{}", source,
               diffs);
}

std::vector<std::uint8_t> model_file_bytes(const ModelConfig& config,
                                           const std::vector<ParamInfo>& layout,
                                           const std::vector<float>& params) {
  std::vector<SafetensorsTensor> tensors;
  for (const ParamInfo& p : layout) {
    tensors.push_back({p.name, DType::f32, p.shape, params.data() + p.offset});
  }
  SafetensorsMetadata meta{{"format", "fp8lab-gpt"}, {"model_config", to_json(config).dump()}};
  return encode_safetensors(tensors, meta);
}

std::vector<std::uint8_t> model_file_bytes(GptModel& model) {
  return model_file_bytes(model.config(), model.layout().params(), model.get_parameters());
}

std::vector<float> read_params(const SafetensorsFile& file, const ParameterLayout& layout,
                               const char* prefix) {
  std::vector<float> out(static_cast<std::size_t>(layout.total()));
  for (const ParamInfo& p : layout.params()) {
    const void* src = file.tensor(prefix + p.name, DType::f32, p.shape);
    std::memcpy(out.data() + p.offset, src, static_cast<std::size_t>(p.numel()) * sizeof(float));
  }
  return out;
}

SafetensorsFile load_verified(const fs::path& path, const std::string& expected_sha) {
  const std::string got = sha256_file(path);
  FP8LAB_CHECK_KIND(
      ErrorKind::format, got == expected_sha,
      "checkpoint file '{}' is corrupt or truncated: SHA-256 {} but meta.json records {}",
      path.string(), got, expected_sha);
  return SafetensorsFile::load(path);
}

// The directory name a checkpoint of `step` is installed under: step_N, or step_N.1 when `latest`
// names step_N (and the other way round). Replacing the directory `latest` names would leave
// `latest` dangling between the removal and the rename; a second name lets `latest` move from
// one complete checkpoint to the other in one atomic rename. Same-step directories `latest` does
// not name are leftovers of a crash (after their rename, before `latest` moved): removed.
std::string install_name(const fs::path& dir, std::int64_t step) {
  const std::string base = fmt::format("step_{:08d}", step);
  const std::string current = read_latest_name(dir);
  std::string chosen;
  for (const std::string& name : {base, base + ".1"}) {
    if (name == current) continue;
    fs::remove_all(dir / name);
    if (chosen.empty()) chosen = name;
  }
  return chosen;
}

// Keeps the newest `keep` (at least 1) checkpoints by step, and only `installed` of its step.
void prune_checkpoints(const fs::path& dir, const std::string& installed, std::int64_t keep) {
  const std::int64_t step = *checkpoint_dir_step(installed);
  std::vector<std::pair<std::int64_t, fs::path>> all;
  for (auto& [s, path] : list_checkpoint_dirs(dir)) {
    if (path.filename() == installed) continue;
    if (s == step)
      fs::remove_all(path);
    else
      all.emplace_back(s, std::move(path));
  }
  const auto others = static_cast<std::size_t>(std::max<std::int64_t>(keep, 1) - 1);
  // The installed checkpoint is the newest in a run; older ones beyond keep - 1 go.
  for (std::size_t i = 0; i + others < all.size(); ++i) {
    if (all[i].first < step) fs::remove_all(all[i].second);
  }
}

// The step counts optimizer.safetensors records (absent in checkpoints of older builds) must
// agree with meta.json's.
void check_recorded_counts(const SafetensorsFile& moments, const CheckpointMeta& meta) {
  for (const auto& [key, value] :
       {std::pair{"step", meta.step}, std::pair{"adam_updates", meta.adam_updates}}) {
    const auto it = moments.metadata().find(key);
    FP8LAB_CHECK_KIND(ErrorKind::format,
                      it == moments.metadata().end() || it->second == std::to_string(value),
                      "checkpoint '{}': meta.json says {} {} but optimizer.safetensors records {}: "
                      "the metadata was edited",
                      moments.source(), key, value, it->second);
  }
}

}  // namespace

fs::path save_checkpoint(const fs::path& dir, GptModel& model, const AdamW& optimizer,
                         const CheckpointMeta& meta, std::int64_t keep) {
  FP8LAB_CHECK(optimizer.holds_all(),
               "save_checkpoint: the optimizer holds only a shard; gather its moments and pass "
               "them as host vectors");
  return save_checkpoint(dir, model, optimizer.m_host(), optimizer.v_host(), meta, keep);
}

fs::path save_checkpoint(const fs::path& dir, GptModel& model, std::vector<float> m,
                         std::vector<float> v, const CheckpointMeta& meta, std::int64_t keep) {
  return write_checkpoint(snapshot_checkpoint(dir, model, std::move(m), std::move(v), meta, keep));
}

CheckpointSnapshot snapshot_checkpoint(const fs::path& dir, GptModel& model, std::vector<float> m,
                                       std::vector<float> v, const CheckpointMeta& meta,
                                       std::int64_t keep) {
  FP8LAB_CHECK(m.size() == static_cast<std::size_t>(model.parameter_count()) &&
                   v.size() == m.size(),
               "save_checkpoint: moments of {} and {} elements for {} parameters", m.size(),
               v.size(), model.parameter_count());
  return {dir,
          model.config(),
          model.layout().params(),
          model.get_parameters(),
          std::move(m),
          std::move(v),
          meta,
          keep};
}

fs::path write_checkpoint(const CheckpointSnapshot& s) {
  const fs::path& dir = s.checkpoints_dir;
  fs::create_directories(dir);
  const std::string name = install_name(dir, s.meta.step);
  const fs::path final_dir = dir / name, tmp_dir = dir / (name + ".tmp");
  fs::remove_all(tmp_dir);
  fs::create_directories(tmp_dir);
  CheckpointMeta meta = s.meta;
  {
    const std::vector<std::uint8_t> weights = model_file_bytes(s.model_config, s.params, s.weights);
    write_file_atomic(tmp_dir / "model.safetensors", weights.data(), weights.size());
    meta.model_sha256 = sha256_hex(weights.data(), weights.size());
  }
  {
    std::vector<SafetensorsTensor> tensors;
    for (const ParamInfo& p : s.params) {
      tensors.push_back({"exp_avg." + p.name, DType::f32, p.shape, s.exp_avg.data() + p.offset});
      tensors.push_back(
          {"exp_avg_sq." + p.name, DType::f32, p.shape, s.exp_avg_sq.data() + p.offset});
    }
    // The step counts again, inside a file meta.json hashes: an edited count cannot match both.
    const SafetensorsMetadata counts{{"format", "fp8lab-adamw"},
                                     {"step", std::to_string(meta.step)},
                                     {"adam_updates", std::to_string(meta.adam_updates)}};
    const auto bytes = encode_safetensors(tensors, counts);
    write_file_atomic(tmp_dir / "optimizer.safetensors", bytes.data(), bytes.size());
    meta.optimizer_sha256 = sha256_hex(bytes.data(), bytes.size());
  }
  // GptModel::parameter_sha256's hash: of the same fp32 values.
  meta.params_sha256 = sha256_hex(s.weights.data(), s.weights.size() * sizeof(float));
  const std::string text = to_json(meta).dump(2) + "\n";
  write_file_atomic(tmp_dir / "meta.json", text.data(), text.size());
  fs::rename(tmp_dir, final_dir);
  fsync_directory(dir);
  const std::string latest = name + "\n";
  write_file_atomic(dir / "latest", latest.data(), latest.size());
  prune_checkpoints(dir, name, s.keep);
  return final_dir;
}

CheckpointMeta load_checkpoint(const fs::path& ckpt, GptModel& model, AdamW* optimizer) {
  CheckpointMeta meta = read_checkpoint_meta(ckpt);
  check_same_model(meta.config.model, model.config(), ckpt.string());
  const SafetensorsFile weights = load_verified(ckpt / "model.safetensors", meta.model_sha256);
  model.set_parameters(read_params(weights, model.layout(), ""));
  if (optimizer != nullptr) {
    const SafetensorsFile moments =
        load_verified(ckpt / "optimizer.safetensors", meta.optimizer_sha256);
    check_recorded_counts(moments, meta);
    const std::vector<float> m = read_params(moments, model.layout(), "exp_avg.");
    const std::vector<float> v = read_params(moments, model.layout(), "exp_avg_sq.");
    const std::size_t first = static_cast<std::size_t>(optimizer->shard().begin);
    optimizer->set_moments(m.data() + first, v.data() + first);
    optimizer->set_updates(meta.adam_updates);
  }
  FP8LAB_CHECK_KIND(ErrorKind::format, model.parameter_sha256() == meta.params_sha256,
                    "checkpoint '{}': loaded weights hash to {} but meta.json records {}",
                    ckpt.string(), model.parameter_sha256(), meta.params_sha256);
  return meta;
}

void check_weights_fit_file(const fs::path& checkpoint_dir, const ModelConfig& config) {
  config.validate();
  const fs::path file = checkpoint_dir / "model.safetensors";
  std::error_code ec;
  const std::uint64_t size = fs::is_regular_file(file, ec) ? fs::file_size(file, ec) : 0;
  FP8LAB_CHECK_KIND(ErrorKind::io, !ec && size > 0,
                    "checkpoint '{}' has no readable "
                    "model.safetensors",
                    checkpoint_dir.string());
  // Lower bounds first, without overflow (a block holds 12 d^2 + 2 d floats), so that not even
  // the layout of an absurd config is built: its size is then bounded by the file's.
  __extension__ using u128 = unsigned __int128;
  const std::uint64_t floats = size / 4, d = static_cast<std::uint64_t>(config.d_model);
  const u128 per_block = u128{12} * d * d + 2 * d;
  const bool plausible = d <= floats / d &&
                         static_cast<std::uint64_t>(config.vocab_size) <= floats / d &&
                         static_cast<std::uint64_t>(config.seq_len) <= floats / d &&
                         static_cast<u128>(config.n_layers) <= u128{floats} / per_block;
  const std::int64_t params = plausible ? ParameterLayout(config).total() : -1;
  FP8LAB_CHECK_KIND(ErrorKind::format, params >= 0 && static_cast<std::uint64_t>(params) <= floats,
                    "checkpoint '{}': its meta.json describes a model (vocab {}, d_model {}, {} "
                    "layers, seq_len {}) larger than its {}-byte model.safetensors can hold",
                    checkpoint_dir.string(), config.vocab_size, config.d_model, config.n_layers,
                    config.seq_len, size);
}

void save_weights(const fs::path& file, GptModel& model) {
  const auto bytes = model_file_bytes(model);
  write_file_atomic(file, bytes.data(), bytes.size());
}

void load_weights(const fs::path& file, GptModel& model) {
  const SafetensorsFile weights = SafetensorsFile::load(file);
  auto it = weights.metadata().find("model_config");
  FP8LAB_CHECK_KIND(ErrorKind::format, it != weights.metadata().end(),
                    "'{}' has no model_config metadata (not an fp8lab weights file)",
                    file.string());
  ModelConfig saved;
  saved = model_config_from_json(
      parse_json(it->second, fmt::format("'{}' model_config metadata", file.string())));
  check_same_model(saved, model.config(), file.string());
  model.set_parameters(read_params(weights, model.layout(), ""));
}

}  // namespace fp8lab
