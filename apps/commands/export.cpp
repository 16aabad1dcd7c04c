// `fp8lab export --format hf`: a checkpoint as a Hugging Face transformers directory
// (docs/checkpoint-format.md): config.json, model.safetensors and the model's Python code
// (modeling_fp8lab.py, model.py), loaded with AutoModelForCausalLM.from_pretrained(DIR,
// trust_remote_code=True).
//
// The directory appears whole or not at all: it is written as DIR.tmp-<pid> and renamed to DIR
// (which must not exist or be empty); bad input exits 2 having written nothing.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "command_registry.hpp"
#include "commands/hf_export_files.hpp"
#include "commands/json_output.hpp"
#include "fp8lab/checkpoint.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/inference_checkpoint.hpp"
#include "fp8lab/safetensors.hpp"

namespace fp8lab::cli {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

struct ExportOptions {
  std::string format = "hf";
  std::string checkpoint;
  std::string out;
  JsonOutput json;
};

// Removes a half-written directory unless released.
class TempDir {
 public:
  explicit TempDir(fs::path path) : path_(std::move(path)) { fs::create_directories(path_); }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  void release() { path_.clear(); }

 private:
  fs::path path_;
};

void write_text(const fs::path& file, std::string_view text) {
  write_file_atomic(file, text.data(), text.size());
}

json hf_config(const InferenceCheckpoint& ckpt, const std::string& tokenizer) {
  json c = to_json(ckpt.meta.config.model);
  c["architectures"] = {"Fp8labGPTForCausalLM"};
  c["auto_map"] = {{"AutoConfig", "modeling_fp8lab.Fp8labGPTConfig"},
                   {"AutoModelForCausalLM", "modeling_fp8lab.Fp8labGPTForCausalLM"}};
  c["model_type"] = "fp8lab_gpt";
  c["torch_dtype"] = "float32";
  c["tie_word_embeddings"] = false;  // the head reads wte itself (modeling_fp8lab.py)
  const bool gpt2 = tokenizer == "gpt2";
  c["bos_token_id"] = gpt2 ? json(50256) : json(nullptr);
  c["eos_token_id"] = gpt2 ? json(50256) : json(nullptr);
  c["fp8lab"] = {{"checkpoint", fs::absolute(ckpt.dir).string()},
                 {"step", ckpt.meta.step},
                 {"params_sha256", ckpt.meta.params_sha256},
                 {"tokenizer", tokenizer.empty() ? json(nullptr) : json(tokenizer)},
                 {"run_config", to_json(ckpt.meta.config)}};
  return c;
}

void check_out_dir(const fs::path& out) {
  FP8LAB_CHECK(!out.empty(), "--out must name a directory");
  std::error_code ec;
  FP8LAB_CHECK(!fs::exists(out, ec) || (fs::is_directory(out, ec) && fs::is_empty(out, ec)),
               "--out '{}' exists and is not an empty directory: export writes a new one",
               out.string());
  const fs::path parent = fs::absolute(out).parent_path();
  FP8LAB_CHECK_KIND(ErrorKind::io, fs::is_directory(parent, ec),
                    "--out '{}': its parent directory '{}' does not exist", out.string(),
                    parent.string());
}

void run_export(const ExportOptions& o) {
  FP8LAB_CHECK(o.format == "hf", "--format {} is not supported (hf)", o.format);
  fs::path out = fs::path(o.out).lexically_normal();
  if (!out.has_filename()) out = out.parent_path();  // "dir/" is "dir"
  check_out_dir(out);
  const InferenceCheckpoint ckpt = open_inference_checkpoint(o.checkpoint);
  o.json.check_not_input({ckpt.dir / "meta.json", ckpt.dir / "model.safetensors"});
  auto backend = make_cpu_backend();
  const auto model = load_inference_model(ckpt, *backend);  // verifies the hashes
  const std::vector<float> params = model->get_parameters();
  std::vector<SafetensorsTensor> tensors;
  for (const ParamInfo& p : model->layout().params())
    tensors.push_back({p.name, DType::f32, p.shape, params.data() + p.offset});
  // transformers reads only files whose metadata says "pt".
  const std::vector<std::uint8_t> weights = encode_safetensors(
      tensors, {{"format", "pt"},
                {"fp8lab_format", "fp8lab-gpt"},
                {"model_config", to_json(ckpt.meta.config.model).dump()},
                {"params_sha256", ckpt.meta.params_sha256}});
  const std::string tokenizer = run_tokenizer_name(ckpt.meta.config);

  TempDir tmp(fs::path(out.string() + ".tmp-" + std::to_string(::getpid())));
  write_file_atomic(tmp.path() / "model.safetensors", weights.data(), weights.size());
  write_text(tmp.path() / "config.json", hf_config(ckpt, tokenizer).dump(2) + "\n");
  for (const EmbeddedFile& f : hf_export_files()) write_text(tmp.path() / f.name, f.text);
  fs::rename(tmp.path(), out);
  tmp.release();
  fsync_directory(fs::absolute(out).parent_path());
  json files = {"config.json", "model.safetensors"};
  for (const EmbeddedFile& f : hf_export_files()) files.push_back(std::string(f.name));
  o.json.emit({{"checkpoint", ckpt.dir.string()},
               {"step", ckpt.meta.step},
               {"params_sha256", ckpt.meta.params_sha256},
               {"out", out.string()},
               {"files", files},
               {"tensors", tensors.size()},
               {"weights_bytes", weights.size()}});
  if (o.json.to_stdout) return;
  std::printf(
      "fp8lab export: %s (step %lld) -> %s: config.json, model.safetensors (%zu tensors, %.1f "
      "MB), modeling_fp8lab.py, model.py\n"
      "  from transformers import AutoModelForCausalLM\n"
      "  model = AutoModelForCausalLM.from_pretrained(\"%s\", trust_remote_code=True)\n",
      ckpt.dir.string().c_str(), static_cast<long long>(ckpt.meta.step), out.string().c_str(),
      tensors.size(), static_cast<double>(weights.size()) / 1e6, out.string().c_str());
}

void setup_export(CLI::App& sub) {
  auto o = std::make_shared<ExportOptions>();
  sub.footer(
      "--format hf writes a Hugging Face transformers directory: config.json (the model config,\n"
      "auto_map to the code below, and the run it came from under \"fp8lab\"), model.safetensors\n"
      "(the fp32 weights under their fp8lab names), modeling_fp8lab.py and model.py (the\n"
      "model, from python/fp8lab_torch). Its logits are fp8lab's model's; with\n"
      "from_pretrained(..., fp8lab_mixed=True) it also rounds as fp8lab's mixed precision does.\n"
      "The directory is written whole or not at all; --out must not exist or be empty.\n"
      "Example: fp8lab export --format hf --checkpoint runs/tiny --out runs/tiny-hf\n");
  sub.add_option("--format", o->format, "hf (Hugging Face transformers)")
      ->check(CLI::IsMember({"hf"}))
      ->capture_default_str();
  sub.add_option("--checkpoint", o->checkpoint,
                 "a run directory, its checkpoints/ directory, or one step_N checkpoint")
      ->required();
  sub.add_option("--out", o->out, "the directory to create (new or empty)")->required();
  o->json.add_options(sub, "a summary (checkpoint, step, out, files, tensors)");
  sub.callback([o] { run_export(*o); });
}

const CommandRegistration kRegistration{
    {"export", "Write a checkpoint as a Hugging Face transformers directory (--format hf)",
     setup_export}};

}  // namespace
}  // namespace fp8lab::cli
