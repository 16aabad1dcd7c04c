// Typed configuration of a model and of a training run.
//
// A run's configuration is one RunConfig. It is filled from a preset or a JSON file, then
// overridden key by key (`--set optim.lr=3e-4`), validated, and written back out in full as the
// run's resolved config. JSON parsing is strict: an unknown key or a value of the wrong type is an
// fp8lab::Error naming the key, so a typo never silently falls back to a default.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fp8lab/dtype.hpp"
#include "fp8lab/fp8_recipe.hpp"
#include "fp8lab/kernel_options.hpp"

namespace fp8lab {

struct ModelConfig {
  std::int64_t vocab_size = 256;
  std::int64_t d_model = 128;
  std::int64_t n_layers = 4;
  std::int64_t n_heads = 4;
  std::int64_t seq_len = 128;  // also the number of learned position embeddings
  float norm_eps = 1e-5f;
  float init_std = 0.02f;  // residual output projections use init_std / sqrt(2 * n_layers)

  std::int64_t head_dim() const { return d_model / n_heads; }
  std::int64_t d_ff() const { return 4 * d_model; }
  void validate() const;  // throws naming the offending field
  bool operator==(const ModelConfig&) const = default;
};

// Which linears run in FP8 (design.md §2). The tied LM head stays BF16 in every policy.
enum class PrecisionPolicy : std::uint8_t { bf16, fp8_mlp, fp8_linears };
const char* policy_name(PrecisionPolicy p);           // "bf16", "fp8-mlp", "fp8-linears"
PrecisionPolicy parse_policy(std::string_view name);  // throws naming the bad string

// mixed: bf16 activations and working weights, fp32 master weights, residual stream and grads.
// fp32: every tensor fp32 and every linear an fp32 GEMM: the reference for gradient checks.
enum class ComputeMode : std::uint8_t { mixed, fp32 };
const char* compute_mode_name(ComputeMode m);
ComputeMode parse_compute_mode(std::string_view name);

// A training-state dtype (precision.grads, optim.moments): "fp32" (DType::f32) or "bf16";
// parse_state_dtype throws naming `key` and the bad string.
const char* state_dtype_name(DType t);
DType parse_state_dtype(std::string_view name, const char* key);

struct PrecisionConfig {
  PrecisionPolicy policy = PrecisionPolicy::bf16;
  bool mlp_recompute = false;  // recompute the MLP in the backward instead of keeping it
  // Recompute the cheap pointwise outputs the backward reads (ln1, ln2: RMSNorm of the kept
  // residual stream; gelu: GELU of the kept fc output) in each block's backward, before the
  // first op that reads them, instead of keeping them per block. Same bits, except that a bf16
  // fc's GELU then runs as its own op rather than in the GEMM's epilogue (on the CUDA backend:
  // other roundings); combines with every policy and with mlp_recompute (which rebuilds gelu).
  bool pointwise_recompute = false;
  // Rebuild each block's residual sum after its attention branch (x + attn.proj(...), f32, the
  // MLP's input that ln2's backward reads) in the backward from the block's input and the
  // branch output, kept in bf16 instead: 2 bytes an element of [tokens, d_model] per block less,
  // for one f32 buffer shared by all blocks and one add per block in the backward (fused into
  // ln2's rebuild under pointwise_recompute). Same bits; mixed compute only (JSON
  // precision.residual_recompute).
  bool residual_recompute = false;
  // Recompute each block's qkv projection in the backward (ln1 rebuilt from the kept residual
  // stream, then the qkv linear's forward into one shared buffer) instead of keeping q, k, v
  // ([tokens, 3 d_model]) and the projection's saved state per block: the attention's largest
  // activation, for one more qkv GEMM and its cast per block and backward. Same bits; combines
  // with every policy and the other recomputes (JSON precision.qkv_recompute).
  bool qkv_recompute = false;
  // The FP8 block linears cast W from the fp32 master through one transient bf16 copy (the
  // bits of the working copy) instead of keeping a bf16 working copy of their weights: 2 bytes
  // a parameter of those weights less, for one bf16 conversion per linear and forward. Same
  // bits; mixed compute and an FP8 policy only (JSON precision.fp8_weights_from_master).
  bool fp8_weights_from_master = false;
  ComputeMode compute = ComputeMode::mixed;
  // The dtype of the parameter-gradient buffer (JSON precision.grads: fp32 | bf16). bf16 halves
  // it (4 -> 2 bytes a parameter): each op that writes a gradient adds its contribution to the
  // stored value in fp32 and rounds once, to nearest even, so gradient accumulation over
  // micro-batches and the tied wte's two writes (LM head, embedding) round once each; the
  // gradient norm and AdamW read it widened. Changes the arithmetic (not a memory option: a
  // resume keeps it); mixed compute only.
  DType grads = DType::f32;
  // The FP8 linears' scaling recipe and wgrad precision (fp8lab/fp8_recipe.hpp); JSON keys
  // precision.fp8_recipe (tensorwise | rowwise | blockwise) and precision.fp8_wgrad (fp8 | bf16).
  Fp8Options fp8{};
  // The combinations no model runs (fp32 compute with an FP8 policy, weights from the master
  // without FP8 linears, residual recompute or bf16 gradients under fp32 compute, gradients
  // neither f32 nor bf16); throws naming the keys.
  void validate() const;
  bool operator==(const PrecisionConfig&) const = default;
};

// The memory options: each changes what the model keeps for the backward and rebuilds there,
// not what a step computes (docs/training.md), so a resume may switch them. `key` is the
// option's JSON key under "precision" and in run.json, `label` its name in the trainer's first
// line and its command-line flag (--LABEL), `help` what the flag does.
struct MemoryOption {
  std::string_view key;
  std::string_view label;
  bool PrecisionConfig::*on;
  std::string_view help;
};
inline constexpr std::array<MemoryOption, 5> kMemoryOptions = {{
    {"mlp_recompute", "mlp-recompute", &PrecisionConfig::mlp_recompute,
     "recompute the MLP in the backward instead of keeping its activations"},
    {"pointwise_recompute", "pointwise-recompute", &PrecisionConfig::pointwise_recompute,
     "recompute the RMSNorm and GELU outputs in the backward instead of keeping them per block"},
    {"residual_recompute", "residual-recompute", &PrecisionConfig::residual_recompute,
     "rebuild each block's residual sum after attention in the backward from the bf16 branch "
     "output instead of keeping it in f32; compute mixed only"},
    {"qkv_recompute", "qkv-recompute", &PrecisionConfig::qkv_recompute,
     "recompute each block's qkv projection in the backward instead of keeping q, k and v per "
     "block"},
    {"fp8_weights_from_master", "fp8-weights-from-master",
     &PrecisionConfig::fp8_weights_from_master,
     "cast the FP8 linears' weights from the fp32 master instead of keeping a bf16 working copy"
     "; an FP8 policy under compute mixed only"},
}};

struct OptimConfig {
  float lr = 1e-3f;      // peak learning rate
  float min_lr = 1e-4f;  // the floor the decay ends at
  std::int64_t warmup_steps = 10;
  std::string decay = "cosine";  // cosine | linear | constant
  std::int64_t decay_steps = 0;  // step at which the floor is reached; 0: train.steps
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
  bool decay_norms = false;       // apply weight decay to RMSNorm weights
  bool decay_embeddings = false;  // apply weight decay to the token/position embeddings
  float clip_grad_norm = 1.0f;    // global L2 norm; 0 disables clipping
  // The dtype AdamW keeps both moments in (JSON optim.moments: fp32 | bf16). bf16 halves the
  // optimizer state (8 -> 4 bytes a parameter): each update computes in fp32 from the stored
  // moments and rounds the new ones once, to nearest even. Checkpoints hold them as fp32 either
  // way (bf16 -> fp32 -> bf16 is exact), so a resume gives the same bits.
  DType moments = DType::f32;
  bool operator==(const OptimConfig&) const = default;
};

struct TrainConfig {
  std::int64_t steps = 100;
  std::int64_t micro_batch = 8;  // sequences per forward/backward
  std::int64_t grad_accum = 1;   // micro-batches per optimizer step
  std::uint64_t seed = 1234;     // initialisation seed (weights depend on seed and name only)
  std::uint64_t data_seed = 1;   // batch order
  std::int64_t log_every = 1;
  std::int64_t eval_every = 0;  // 0: no periodic validation
  std::int64_t eval_batches = 4;
  std::int64_t checkpoint_every = 0;  // 0: only the final checkpoint
  std::int64_t keep_checkpoints = 2;
  std::string nonfinite = "abort";  // abort | skip
  std::int64_t loss_chunk_rows = 1024;
  std::int64_t ignore_index = -1;  // targets equal to this are not counted (-1: none are)
  bool operator==(const TrainConfig&) const = default;
};

// Where tokens come from. synthetic: a deterministic pseudo-random stream with learnable
// structure (tests, demos); bytes: the bytes of a text file as tokens (vocab 256); shards: token
// shards (src/data/loader.hpp), `train`/`val` naming a .bin, a directory or a manifest.json.
struct DataConfig {
  std::string kind = "synthetic";
  std::string train;
  std::string val;
  std::string order = "shuffled";  // shuffled | sequential
  bool operator==(const DataConfig&) const = default;
};

struct RunConfig {
  std::string preset = "tiny";
  std::string backend = "auto";  // auto | cpu | cuda (choose_backend in fp8lab/backend.hpp)
  // Which kernel families the CUDA backend runs (fp8lab/kernel_options.hpp); JSON key
  // kernels.attention (auto | mma-sync | wgmma | wgmma-ws). Same bits in every choice.
  KernelOptions kernels;
  ModelConfig model;
  PrecisionConfig precision;
  OptimConfig optim;
  TrainConfig train;
  DataConfig data;
  void validate() const;
  void validate_fp8_shapes() const;  // part of validate()
  bool operator==(const RunConfig&) const = default;
};

// Presets: tiny (CPU demo), gpt50m, gpt350m, gpt1.3b. Unknown names throw, listing the known.
ModelConfig model_preset(std::string_view name);
RunConfig run_preset(std::string_view name);  // the model plus training defaults that suit it
std::vector<std::string> preset_names();

nlohmann::json to_json(const ModelConfig& c);
nlohmann::json to_json(const RunConfig& c);
ModelConfig model_config_from_json(const nlohmann::json& j);
// Missing keys keep `base`'s values; unknown keys and wrong types throw naming the key.
RunConfig run_config_from_json(const nlohmann::json& j, const RunConfig& base = RunConfig{});
RunConfig load_run_config(const std::filesystem::path& path);  // a JSON file

// Applies "section.key=value" to a resolved config. The key must exist; the value is parsed as
// JSON when the key holds a number or boolean, and taken verbatim when it holds a string.
void apply_override(RunConfig& config, std::string_view assignment);

// Turns on every memory option that keeps the gradients and applies to `config` as resolved so
// far (`fp8lab train --lean-memory`): MLP, pointwise and qkv recompute; residual recompute under
// compute mixed; the FP8 linears' weights from the master under an FP8 policy. Each is recorded
// as its own key, and a resume may switch any of them.
void enable_lean_memory(RunConfig& config);

}  // namespace fp8lab
