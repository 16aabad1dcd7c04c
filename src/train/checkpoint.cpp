// Checkpoint save/load (see fp8lab/checkpoint.hpp and docs/checkpoint-format.md).
#include "fp8lab/checkpoint.hpp"

#include "fp8lab/error.hpp"
#include "fp8lab/safetensors.hpp"
#include "fp8lab/sha256.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace fp8lab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "fp8lab-checkpoint";
constexpr int kFormatVersion = 1;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  FP8LAB_CHECK_KIND(ErrorKind::io, in.good(), "cannot open '{}'", path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Names every field in which two model configs differ.
void check_same_model(const ModelConfig& saved, const ModelConfig& current,
                      const std::string& source) {
  const json a = to_json(saved), b = to_json(current);
  std::string diffs;
  for (const auto& [key, value] : a.items()) {
    if (value != b.at(key))
      diffs += fmt::format(" {}: checkpoint {} vs model {};", key, value.dump(), b.at(key).dump());
  }
  FP8LAB_CHECK(diffs.empty(), "checkpoint '{}' was made for another model config:{}", source,
               diffs);
}

std::vector<std::uint8_t> model_file_bytes(GptModel& model) {
  const std::vector<float> params = model.get_parameters();
  std::vector<SafetensorsTensor> tensors;
  for (const ParamInfo& p : model.layout().params()) {
    tensors.push_back({p.name, DType::f32, p.shape, params.data() + p.offset});
  }
  SafetensorsMetadata meta{{"format", "fp8lab-gpt"},
                           {"model_config", to_json(model.config()).dump()}};
  return encode_safetensors(tensors, meta);
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

}  // namespace

json to_json(const CheckpointMeta& m) {
  return json{
      {"format", kFormat},
      {"format_version", kFormatVersion},
      {"step", m.step},
      {"adam_updates", m.adam_updates},
      {"skipped_steps", m.skipped_steps},
      {"init_sha256", m.init_sha256},
      {"params_sha256", m.params_sha256},
      {"config", to_json(m.config)},
      {"data_position", m.data_position},
      {"rng",
       {{"generator", "philox4x32-10"}, {"init_seed", m.init_seed}, {"data_seed", m.data_seed}}},
      {"files",
       {{"model.safetensors", m.model_sha256}, {"optimizer.safetensors", m.optimizer_sha256}}}};
}

CheckpointMeta parse_checkpoint_meta(std::string_view text, std::string_view source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    FP8LAB_FAIL(ErrorKind::format, "checkpoint metadata '{}' is not valid JSON: {}", source,
                e.what());
  }
  FP8LAB_CHECK_KIND(ErrorKind::format, j.is_object() && j.value("format", "") == kFormat,
                    "'{}' is not fp8lab checkpoint metadata (no \"format\": \"{}\")", source,
                    kFormat);
  try {
    FP8LAB_CHECK_KIND(ErrorKind::format, j.at("format_version").get<int>() == kFormatVersion,
                      "checkpoint metadata '{}' has format_version {}, this build reads {}", source,
                      j.at("format_version").dump(), kFormatVersion);
    CheckpointMeta m;
    m.step = j.at("step").get<std::int64_t>();
    m.adam_updates = j.at("adam_updates").get<std::int64_t>();
    m.skipped_steps = j.at("skipped_steps").get<std::int64_t>();
    FP8LAB_CHECK_KIND(
        ErrorKind::format,
        m.step >= 0 && m.adam_updates >= 0 && m.skipped_steps >= 0 &&
            m.adam_updates + m.skipped_steps == m.step,
        "checkpoint metadata '{}': step {}, adam_updates {}, skipped_steps {} are inconsistent",
        source, m.step, m.adam_updates, m.skipped_steps);
    m.init_sha256 = j.at("init_sha256").get<std::string>();
    m.params_sha256 = j.at("params_sha256").get<std::string>();
    m.config = run_config_from_json(j.at("config"), RunConfig{});
    m.data_position = j.at("data_position");
    m.init_seed = j.at("rng").at("init_seed").get<std::uint64_t>();
    m.data_seed = j.at("rng").at("data_seed").get<std::uint64_t>();
    m.model_sha256 = j.at("files").at("model.safetensors").get<std::string>();
    m.optimizer_sha256 = j.at("files").at("optimizer.safetensors").get<std::string>();
    return m;
  } catch (const json::exception& e) {
    FP8LAB_FAIL(ErrorKind::format, "checkpoint metadata '{}' is malformed: {}", source, e.what());
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::format) throw;
    FP8LAB_FAIL(ErrorKind::format, "checkpoint metadata '{}' is malformed: {}", source,
                e.message());
  }
}

fs::path save_checkpoint(const fs::path& dir, GptModel& model, const AdamW& optimizer,
                         const CheckpointMeta& meta, std::int64_t keep) {
  FP8LAB_CHECK(optimizer.holds_all(),
               "save_checkpoint: the optimizer holds only a shard; gather its moments and pass "
               "them as host vectors");
  std::vector<float> m(static_cast<std::size_t>(model.parameter_count())), v(m.size());
  model.backend().download(optimizer.m(), m.data());
  model.backend().download(optimizer.v(), v.data());
  return save_checkpoint(dir, model, m, v, meta, keep);
}

fs::path save_checkpoint(const fs::path& dir, GptModel& model, const std::vector<float>& m,
                         const std::vector<float>& v, const CheckpointMeta& meta_in,
                         std::int64_t keep) {
  FP8LAB_CHECK(m.size() == static_cast<std::size_t>(model.parameter_count()) &&
                   v.size() == m.size(),
               "save_checkpoint: moments of {} and {} elements for {} parameters", m.size(),
               v.size(), model.parameter_count());
  fs::create_directories(dir);
  const std::string name = fmt::format("step_{:08d}", meta_in.step);
  const fs::path final_dir = dir / name, tmp_dir = dir / (name + ".tmp");
  fs::remove_all(tmp_dir);
  fs::create_directories(tmp_dir);
  CheckpointMeta meta = meta_in;
  const std::vector<std::uint8_t> weights = model_file_bytes(model);
  write_file_atomic(tmp_dir / "model.safetensors", weights.data(), weights.size());
  meta.model_sha256 = sha256_hex(weights.data(), weights.size());
  {
    std::vector<SafetensorsTensor> tensors;
    for (const ParamInfo& p : model.layout().params()) {
      tensors.push_back({"exp_avg." + p.name, DType::f32, p.shape, m.data() + p.offset});
      tensors.push_back({"exp_avg_sq." + p.name, DType::f32, p.shape, v.data() + p.offset});
    }
    const auto bytes = encode_safetensors(tensors, {{"format", "fp8lab-adamw"}});
    write_file_atomic(tmp_dir / "optimizer.safetensors", bytes.data(), bytes.size());
    meta.optimizer_sha256 = sha256_hex(bytes.data(), bytes.size());
  }
  meta.params_sha256 = model.parameter_sha256();
  const std::string text = to_json(meta).dump(2) + "\n";
  write_file_atomic(tmp_dir / "meta.json", text.data(), text.size());
  fs::remove_all(final_dir);  // a leftover of a crash after its rename but before `latest` moved
  fs::rename(tmp_dir, final_dir);
  fsync_directory(dir);
  const std::string latest = name + "\n";
  write_file_atomic(dir / "latest", latest.data(), latest.size());
  // Prune: keep the newest `keep` complete checkpoints.
  std::vector<fs::path> all;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string n = entry.path().filename().string();
    if (entry.is_directory() && n.rfind("step_", 0) == 0 && n.find(".tmp") == std::string::npos)
      all.push_back(entry.path());
  }
  std::sort(all.begin(), all.end());
  for (std::size_t i = 0;
       i + static_cast<std::size_t>(std::max<std::int64_t>(keep, 1)) < all.size(); ++i) {
    if (all[i] != final_dir) fs::remove_all(all[i]);
  }
  return final_dir;
}

std::optional<fs::path> latest_checkpoint(const fs::path& dir) {
  const fs::path pointer = dir / "latest";
  if (!fs::exists(pointer)) return std::nullopt;
  std::string name = read_text(pointer);
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  FP8LAB_CHECK_KIND(ErrorKind::format,
                    name.rfind("step_", 0) == 0 && name.find('/') == std::string::npos,
                    "'{}' does not name a checkpoint: '{}'", pointer.string(), name);
  FP8LAB_CHECK_KIND(ErrorKind::io, fs::is_directory(dir / name),
                    "'{}' names '{}', which does not exist", pointer.string(), name);
  return dir / name;
}

CheckpointMeta read_checkpoint_meta(const fs::path& checkpoint_dir) {
  const fs::path meta_path = checkpoint_dir / "meta.json";
  return parse_checkpoint_meta(read_text(meta_path), meta_path.string());
}

CheckpointMeta load_checkpoint(const fs::path& ckpt, GptModel& model, AdamW* optimizer) {
  CheckpointMeta meta = read_checkpoint_meta(ckpt);
  check_same_model(meta.config.model, model.config(), ckpt.string());
  const SafetensorsFile weights = load_verified(ckpt / "model.safetensors", meta.model_sha256);
  model.set_parameters(read_params(weights, model.layout(), ""));
  if (optimizer != nullptr) {
    const SafetensorsFile moments =
        load_verified(ckpt / "optimizer.safetensors", meta.optimizer_sha256);
    const std::vector<float> m = read_params(moments, model.layout(), "exp_avg.");
    const std::vector<float> v = read_params(moments, model.layout(), "exp_avg_sq.");
    const std::size_t first = static_cast<std::size_t>(optimizer->shard().begin);
    model.backend().upload(optimizer->m(), m.data() + first);
    model.backend().upload(optimizer->v(), v.data() + first);
    optimizer->set_updates(meta.adam_updates);
  }
  FP8LAB_CHECK_KIND(ErrorKind::format, model.parameter_sha256() == meta.params_sha256,
                    "checkpoint '{}': loaded weights hash to {} but meta.json records {}",
                    ckpt.string(), model.parameter_sha256(), meta.params_sha256);
  return meta;
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
  try {
    saved = model_config_from_json(json::parse(it->second));
  } catch (const json::exception& e) {
    FP8LAB_FAIL(ErrorKind::format, "'{}': model_config metadata is not JSON: {}", file.string(),
                e.what());
  }
  check_same_model(saved, model.config(), file.string());
  model.set_parameters(read_params(weights, model.layout(), ""));
}

}  // namespace fp8lab
