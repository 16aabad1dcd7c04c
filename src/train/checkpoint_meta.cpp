// Checkpoint metadata (meta.json) and the `latest` pointer: writing, strict parsing, and the
// checks that tie them to the directory they sit in (see fp8lab/checkpoint.hpp).
#include "fp8lab/checkpoint.hpp"

#include "fp8lab/error.hpp"
#include "fp8lab/file_read.hpp"
#include "fp8lab/json_read.hpp"

#include <algorithm>
#include <charconv>

namespace fp8lab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "fp8lab-checkpoint";
constexpr int kFormatVersion = 1;
constexpr std::uint64_t kMaxPointerBytes = 4096;

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
  const json j = parse_json(text, fmt::format("checkpoint metadata '{}'", source));
  FP8LAB_CHECK_KIND(ErrorKind::format, json_has_string(j, "format", kFormat),
                    "'{}' is not fp8lab checkpoint metadata (no \"format\": \"{}\")", source,
                    kFormat);
  try {
    FP8LAB_CHECK_KIND(ErrorKind::format, j.at("format_version") == kFormatVersion,
                      "checkpoint metadata '{}' has format_version {}, this build reads {}", source,
                      json_excerpt(j.at("format_version")), kFormatVersion);
    CheckpointMeta m;
    m.step = j.at("step").get<std::int64_t>();
    m.adam_updates = j.at("adam_updates").get<std::int64_t>();
    m.skipped_steps = j.at("skipped_steps").get<std::int64_t>();
    FP8LAB_CHECK_KIND(
        ErrorKind::format,
        m.step >= 0 && m.adam_updates >= 0 && m.skipped_steps >= 0 && m.adam_updates <= m.step &&
            m.adam_updates + m.skipped_steps == m.step,
        "checkpoint metadata '{}': step {}, adam_updates {}, skipped_steps {} are inconsistent",
        source, m.step, m.adam_updates, m.skipped_steps);
    m.init_sha256 = j.at("init_sha256").get<std::string>();
    m.params_sha256 = j.at("params_sha256").get<std::string>();
    m.config = run_config_from_json(j.at("config"), RunConfig{});
    m.config.validate();
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

std::optional<std::int64_t> checkpoint_dir_step(std::string_view name) {
  constexpr std::string_view kPrefix = "step_";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  const char* first = name.data() + kPrefix.size();
  const char* last = name.data() + name.size();
  std::int64_t step = -1;
  const auto [end, ec] = std::from_chars(first, last, step);
  if (ec != std::errc() || end - first < 8 || step < 0) return std::nullopt;
  // step_N, or step_N.K (a re-saved step; see save_checkpoint)
  if (end != last) {
    std::uint32_t k = 0;
    const auto [kend, kec] = std::from_chars(end + 1, last, k);
    if (*end != '.' || kec != std::errc() || kend != last) return std::nullopt;
  }
  return step;
}

std::vector<std::pair<std::int64_t, fs::path>> list_checkpoint_dirs(const fs::path& checkpoints_dir) {
  std::vector<std::pair<std::int64_t, fs::path>> out;
  for (const auto& entry : fs::directory_iterator(checkpoints_dir)) {
    const auto step = checkpoint_dir_step(entry.path().filename().string());
    if (entry.is_directory() && step) out.emplace_back(*step, entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

CheckpointMeta read_checkpoint_meta(const fs::path& checkpoint_dir) {
  const fs::path meta_path = checkpoint_dir / "meta.json";
  const CheckpointMeta meta = parse_checkpoint_meta(
      read_file_bounded(meta_path, kMaxJsonFileBytes, "checkpoint metadata"), meta_path.string());
  // The directory's name is the step it was saved at: an edited step count shows up here.
  const std::string dir_name = checkpoint_dir.filename().string();
  if (const auto dir_step = checkpoint_dir_step(dir_name)) {
    FP8LAB_CHECK_KIND(ErrorKind::format, *dir_step == meta.step,
                      "checkpoint '{}' was saved at step {} (its name) but its meta.json says "
                      "step {}: the metadata was edited or the directory renamed",
                      checkpoint_dir.string(), *dir_step, meta.step);
  }
  return meta;
}

std::string read_latest_name(const fs::path& dir) {
  const fs::path pointer = dir / "latest";
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(pointer, ec))) return {};
  std::string name = read_file_bounded(pointer, kMaxPointerBytes, "checkpoint pointer");
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  return name;
}

std::optional<fs::path> latest_checkpoint(const fs::path& dir) {
  const std::string name = read_latest_name(dir);
  if (name.empty() && !fs::exists(dir / "latest")) return std::nullopt;
  const fs::path pointer = dir / "latest";
  FP8LAB_CHECK_KIND(ErrorKind::format, checkpoint_dir_step(name).has_value(),
                    "'{}' does not name a checkpoint: '{}'", pointer.string(), name.substr(0, 100));
  FP8LAB_CHECK_KIND(ErrorKind::io, fs::is_directory(dir / name),
                    "'{}' names '{}', which does not exist", pointer.string(), name);
  return dir / name;
}

}  // namespace fp8lab
