// Opening a checkpoint for inference (fp8lab/inference_checkpoint.hpp).
#include "fp8lab/inference_checkpoint.hpp"

#include <nlohmann/json.hpp>
#include <string>

#include "fp8lab/error.hpp"
#include "fp8lab/evaluate.hpp"
#include "fp8lab/json_read.hpp"
#include "fp8lab/safetensors.hpp"

namespace fp8lab {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The model_config in a safetensors file's __metadata__, reading only its header.
ModelConfig weights_model_config(const fs::path& file) {
  const SafetensorsMetadata meta = read_safetensors_metadata(file);
  const auto it = meta.find("model_config");
  FP8LAB_CHECK_KIND(ErrorKind::format, it != meta.end(),
                    "'{}' has no model_config metadata (not an fp8lab weights file)",
                    file.string());
  return model_config_from_json(parse_json(it->second, file.string() + " model_config"));
}

// The manifest.json next to a shards path (a manifest, a directory, or a .bin), if any.
fs::path manifest_near(const std::string& shards) {
  if (shards.empty()) return {};
  const fs::path p(shards);
  std::error_code ec;
  if (p.extension() == ".json") return p;
  if (fs::is_directory(p, ec)) return p / "manifest.json";
  return p.parent_path() / "manifest.json";
}

}  // namespace

InferenceCheckpoint open_inference_checkpoint(const fs::path& where) {
  InferenceCheckpoint c;
  c.dir = resolve_checkpoint_dir(where);
  c.meta = read_checkpoint_meta(c.dir);
  const fs::path weights = c.dir / "model.safetensors";
  const json want = to_json(c.meta.config.model);
  const json got = to_json(weights_model_config(weights));
  std::string diffs;
  for (const auto& [key, value] : want.items()) {
    if (got.at(key) != value)
      diffs += fmt::format(" {} {} (meta.json: {});", key, got.at(key).dump(), value.dump());
  }
  FP8LAB_CHECK(diffs.empty(),
               "checkpoint '{}': model.safetensors holds a model of another config:{}",
               c.dir.string(), diffs);
  return c;
}

std::unique_ptr<GptModel> load_inference_model(const InferenceCheckpoint& checkpoint,
                                               Backend& backend) {
  auto model =
      std::make_unique<GptModel>(checkpoint.meta.config.model, PrecisionConfig{}, 1, backend);
  load_checkpoint(checkpoint.dir, *model, nullptr);
  return model;
}

std::string run_tokenizer_name(const RunConfig& config) {
  if (config.data.kind == "shards") {
    const fs::path manifest = manifest_near(config.data.train);
    std::error_code ec;
    if (!manifest.empty() && fs::is_regular_file(manifest, ec)) {
      try {
        const json m = read_json_file(manifest);
        const std::string name = m.at("tokenizer").at("name").get<std::string>();
        if (name == "byte" || name == "gpt2") return name;
      } catch (const json::exception&) {
        // Not a manifest we can read: decide from the vocabulary below.
      } catch (const Error&) {
        // Not one we may read (too large, too deep): the same.
      }
    }
  }
  const std::int64_t vocab = config.model.vocab_size;
  if (config.data.kind == "bytes" || vocab == 256) return "byte";
  if (vocab >= 50257) return "gpt2";
  return "";
}

}  // namespace fp8lab
