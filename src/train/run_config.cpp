// RunConfig <-> JSON, strict merging of config files and --set overrides.
//
// One code path serves files and overrides: the base config is written to JSON, the patch is
// merged key by key (unknown keys and type changes are errors), and the merged JSON is read back.
#include "fp8lab/config.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

namespace fp8lab {
namespace {

using nlohmann::json;

// fp32 fields print as their shortest decimal (1e-3, not 0.0010000000474974513).
double shortest(float f) {
  return std::stod(fmt::format("{}", f));
}

float get_float(const json& j, const char* key) {
  return static_cast<float>(j.at(key).get<double>());
}

void check_value_ranges(const RunConfig& c);  // RunConfig::validate's numeric ranges (below)

void merge_strict(json& base, const json& patch, const std::string& prefix) {
  FP8LAB_CHECK_KIND(ErrorKind::format, patch.is_object(),
                    "config '{}' must be a JSON object, got {}", prefix.empty() ? "(root)" : prefix,
                    json_excerpt(patch));
  for (const auto& [key, value] : patch.items()) {
    const std::string full = prefix + key;
    auto it = base.find(key);
    if (it == base.end()) {
      std::string known;
      for (const auto& [k, unused] : base.items()) known += (known.empty() ? "" : ", ") + k;
      FP8LAB_FAIL(ErrorKind::invalid_argument, "unknown config key '{}' (known here: {})", full,
                  known);
    }
    if (it->is_object()) {
      merge_strict(*it, value, full + ".");
      continue;
    }
    const bool ok = (it->is_boolean() && value.is_boolean()) ||
                    (it->is_string() && value.is_string()) ||
                    (it->is_number_integer() && value.is_number_integer()) ||
                    (it->is_number_float() && value.is_number());
    FP8LAB_CHECK(ok, "config key '{}' holds {} ({}); {} has the wrong type", full,
                 json_excerpt(*it), it->type_name(), json_excerpt(value));
    *it = value;
  }
}

}  // namespace

json to_json(const ModelConfig& c) {
  return json{{"vocab_size", c.vocab_size},
              {"d_model", c.d_model},
              {"n_layers", c.n_layers},
              {"n_heads", c.n_heads},
              {"seq_len", c.seq_len},
              {"norm_eps", shortest(c.norm_eps)},
              {"init_std", shortest(c.init_std)}};
}

ModelConfig model_config_from_json(const json& j) {
  try {
    ModelConfig c;
    c.vocab_size = j.at("vocab_size").get<std::int64_t>();
    c.d_model = j.at("d_model").get<std::int64_t>();
    c.n_layers = j.at("n_layers").get<std::int64_t>();
    c.n_heads = j.at("n_heads").get<std::int64_t>();
    c.seq_len = j.at("seq_len").get<std::int64_t>();
    c.norm_eps = get_float(j, "norm_eps");
    c.init_std = get_float(j, "init_std");
    return c;
  } catch (const json::exception& e) {
    FP8LAB_FAIL(ErrorKind::format, "bad model config {}: {}", j.dump(), e.what());
  }
}

json to_json(const RunConfig& c) {
  const OptimConfig& o = c.optim;
  const TrainConfig& t = c.train;
  json j{{"preset", c.preset},
         {"backend", c.backend},
         {"kernels", {{"attention", attention_kernels_name(c.kernels.attention)}}},
         {"model", to_json(c.model)},
         {"precision",
          {{"policy", policy_name(c.precision.policy)},
           {"compute", compute_mode_name(c.precision.compute)},
           {"grads", state_dtype_name(c.precision.grads)},
           {"fp8_recipe", fp8_recipe_name(c.precision.fp8.recipe)},
           {"fp8_wgrad", c.precision.fp8.bf16_wgrad ? "bf16" : "fp8"}}},
         {"optim",
          {{"lr", shortest(o.lr)},
           {"min_lr", shortest(o.min_lr)},
           {"warmup_steps", o.warmup_steps},
           {"decay", o.decay},
           {"decay_steps", o.decay_steps},
           {"beta1", shortest(o.beta1)},
           {"beta2", shortest(o.beta2)},
           {"eps", shortest(o.eps)},
           {"weight_decay", shortest(o.weight_decay)},
           {"decay_norms", o.decay_norms},
           {"decay_embeddings", o.decay_embeddings},
           {"clip_grad_norm", shortest(o.clip_grad_norm)},
           {"moments", state_dtype_name(o.moments)}}},
         {"train",
          {{"steps", t.steps},
           {"micro_batch", t.micro_batch},
           {"grad_accum", t.grad_accum},
           {"seed", t.seed},
           {"data_seed", t.data_seed},
           {"log_every", t.log_every},
           {"eval_every", t.eval_every},
           {"eval_batches", t.eval_batches},
           {"checkpoint_every", t.checkpoint_every},
           {"keep_checkpoints", t.keep_checkpoints},
           {"nonfinite", t.nonfinite},
           {"loss_chunk_rows", t.loss_chunk_rows},
           {"ignore_index", t.ignore_index}}},
         {"data",
          {{"kind", c.data.kind},
           {"train", c.data.train},
           {"val", c.data.val},
           {"order", c.data.order}}}};
  for (const MemoryOption& m : kMemoryOptions)
    j["precision"][std::string(m.key)] = c.precision.*m.on;
  return j;
}

RunConfig run_config_from_json(const json& patch, const RunConfig& base) {
  json j = to_json(base);
  merge_strict(j, patch, "");
  try {
    RunConfig c;
    c.preset = j.at("preset").get<std::string>();
    c.backend = j.at("backend").get<std::string>();
    c.kernels.attention =
        parse_attention_kernels(j.at("kernels").at("attention").get<std::string>());
    c.model = model_config_from_json(j.at("model"));
    const json& p = j.at("precision");
    c.precision.policy = parse_policy(p.at("policy").get<std::string>());
    for (const MemoryOption& m : kMemoryOptions)
      c.precision.*m.on = p.at(std::string(m.key)).get<bool>();
    c.precision.compute = parse_compute_mode(p.at("compute").get<std::string>());
    c.precision.grads = parse_state_dtype(p.at("grads").get<std::string>(), "precision.grads");
    c.precision.fp8.recipe = parse_fp8_recipe(p.at("fp8_recipe").get<std::string>());
    const std::string wgrad = p.at("fp8_wgrad").get<std::string>();
    FP8LAB_CHECK_KIND(ErrorKind::invalid_argument, wgrad == "fp8" || wgrad == "bf16",
                      "precision.fp8_wgrad '{}' must be fp8 or bf16", wgrad);
    c.precision.fp8.bf16_wgrad = wgrad == "bf16";
    const json& o = j.at("optim");
    c.optim = {get_float(o, "lr"),
               get_float(o, "min_lr"),
               o.at("warmup_steps").get<std::int64_t>(),
               o.at("decay").get<std::string>(),
               o.at("decay_steps").get<std::int64_t>(),
               get_float(o, "beta1"),
               get_float(o, "beta2"),
               get_float(o, "eps"),
               get_float(o, "weight_decay"),
               o.at("decay_norms").get<bool>(),
               o.at("decay_embeddings").get<bool>(),
               get_float(o, "clip_grad_norm"),
               parse_state_dtype(o.at("moments").get<std::string>(), "optim.moments")};
    const json& t = j.at("train");
    TrainConfig& tc = c.train;
    tc.steps = t.at("steps").get<std::int64_t>();
    tc.micro_batch = t.at("micro_batch").get<std::int64_t>();
    tc.grad_accum = t.at("grad_accum").get<std::int64_t>();
    tc.seed = t.at("seed").get<std::uint64_t>();
    tc.data_seed = t.at("data_seed").get<std::uint64_t>();
    tc.log_every = t.at("log_every").get<std::int64_t>();
    tc.eval_every = t.at("eval_every").get<std::int64_t>();
    tc.eval_batches = t.at("eval_batches").get<std::int64_t>();
    tc.checkpoint_every = t.at("checkpoint_every").get<std::int64_t>();
    tc.keep_checkpoints = t.at("keep_checkpoints").get<std::int64_t>();
    tc.nonfinite = t.at("nonfinite").get<std::string>();
    tc.loss_chunk_rows = t.at("loss_chunk_rows").get<std::int64_t>();
    tc.ignore_index = t.at("ignore_index").get<std::int64_t>();
    const json& d = j.at("data");
    c.data = {d.at("kind").get<std::string>(), d.at("train").get<std::string>(),
              d.at("val").get<std::string>(), d.at("order").get<std::string>()};
    return c;
  } catch (const json::exception& e) {
    FP8LAB_FAIL(ErrorKind::format, "bad run config: {}", e.what());
  }
}

RunConfig load_run_config(const std::filesystem::path& path) {
  const json j = read_json_file(path);
  FP8LAB_CHECK_KIND(ErrorKind::format, j.is_object(), "config file '{}' must hold a JSON object",
                    path.string());
  // A file may start from a preset ("preset": "gpt50m") and override parts of it.
  const std::string preset = j.contains("preset") && j["preset"].is_string()
                                 ? j["preset"].get<std::string>()
                                 : std::string("tiny");
  return run_config_from_json(j, run_preset(preset));
}

void enable_lean_memory(RunConfig& config) {
  PrecisionConfig& p = config.precision;
  p.mlp_recompute = p.pointwise_recompute = p.qkv_recompute = true;
  p.residual_recompute = p.compute == ComputeMode::mixed;
  p.fp8_weights_from_master = p.policy != PrecisionPolicy::bf16;
}

void apply_override(RunConfig& config, std::string_view assignment) {
  const auto eq = assignment.find('=');
  FP8LAB_CHECK(eq != std::string_view::npos && eq > 0,
               "--set expects key=value (e.g. optim.lr=3e-4), got '{}'", assignment);
  const std::string key(assignment.substr(0, eq));
  const std::string text(assignment.substr(eq + 1));
  json current = to_json(config);
  // Walk the dotted key to find what it holds now, to decide how to read the value.
  const json* node = &current;
  std::stringstream parts(key);
  std::string part;
  std::vector<std::string> path;
  while (std::getline(parts, part, '.')) {
    FP8LAB_CHECK(node->is_object() && node->contains(part), "--set {}: unknown config key '{}'",
                 assignment, key);
    node = &(*node)[part];
    path.push_back(part);
  }
  json value;
  if (node->is_string()) {
    value = text;
  } else {
    try {
      value = parse_json(text, "--set " + key);
    } catch (const Error&) {
      FP8LAB_FAIL(ErrorKind::invalid_argument, "--set {}: '{}' is not a valid {} value", key,
                  text.size() > 100 ? text.substr(0, 100) + "..." : text, node->type_name());
    }
  }
  json patch = value;
  for (auto it = path.rbegin(); it != path.rend(); ++it) patch = json{{*it, patch}};
  config = run_config_from_json(patch, config);
}

// An FP8 policy's GEMMs under its recipe: every dimension a multiple of the recipe's alignment
// (tokens per micro-batch, d_model; d_ff and 3 d_model follow), named before any training.
void RunConfig::validate_fp8_shapes() const {
  if (precision.policy == PrecisionPolicy::bf16) return;
  const std::int64_t a = fp8_recipe_alignment(precision.fp8.recipe);
  const std::int64_t tokens = train.micro_batch * model.seq_len;
  FP8LAB_CHECK_KIND(ErrorKind::invalid_argument, model.d_model % a == 0 && tokens % a == 0,
                    "precision.fp8_recipe={} needs model.d_model ({}) and the tokens of a "
                    "micro-batch (train.micro_batch x model.seq_len = {}) to be multiples of {}",
                    fp8_recipe_name(precision.fp8.recipe), model.d_model, tokens, a);
}

void RunConfig::validate() const {
  model.validate();
  FP8LAB_CHECK(backend == "auto" || backend == "cpu" || backend == "cuda",
               "backend '{}' must be auto, cpu or cuda", backend);
  FP8LAB_CHECK(train.steps >= 0 && train.micro_batch > 0 && train.grad_accum > 0,
               "train.steps {} must be >= 0, micro_batch {} and grad_accum {} > 0", train.steps,
               train.micro_batch, train.grad_accum);
  FP8LAB_CHECK(train.nonfinite == "abort" || train.nonfinite == "skip",
               "train.nonfinite '{}' must be abort or skip", train.nonfinite);
  FP8LAB_CHECK(optim.decay == "cosine" || optim.decay == "linear" || optim.decay == "constant",
               "optim.decay '{}' must be cosine, linear or constant", optim.decay);
  FP8LAB_CHECK(optim.lr >= 0.f && optim.min_lr >= 0.f && optim.min_lr <= optim.lr,
               "optim.lr {} and min_lr {} must satisfy 0 <= min_lr <= lr", optim.lr, optim.min_lr);
  FP8LAB_CHECK(optim.beta1 >= 0.f && optim.beta1 < 1.f && optim.beta2 >= 0.f && optim.beta2 < 1.f,
               "optim.beta1 {} and beta2 {} must lie in [0, 1)", optim.beta1, optim.beta2);
  precision.validate();
  validate_fp8_shapes();
  FP8LAB_CHECK(data.kind == "synthetic" || data.kind == "bytes" || data.kind == "shards",
               "data.kind '{}' must be synthetic, bytes or shards", data.kind);
  FP8LAB_CHECK(data.order == "shuffled" || data.order == "sequential",
               "data.order '{}' must be shuffled or sequential", data.order);
  check_value_ranges(*this);
}

namespace {

// Every number the trainer would otherwise take on trust: non-finite floats (1e39 reads as inf),
// non-positive epsilons, negative counts, and sizes that overflow the int32 the kernels index by.
void check_value_ranges(const RunConfig& c) {
  const OptimConfig& o = c.optim;
  const TrainConfig& t = c.train;
  FP8LAB_CHECK(std::isfinite(c.model.norm_eps) && std::isfinite(c.model.init_std),
               "model.norm_eps {} and model.init_std {} must be finite", c.model.norm_eps,
               c.model.init_std);
  FP8LAB_CHECK(std::isfinite(o.lr) && std::isfinite(o.min_lr),
               "optim.lr {} and min_lr {} must be finite", o.lr, o.min_lr);
  FP8LAB_CHECK(std::isfinite(o.eps) && o.eps > 0.f, "optim.eps {} must be finite and > 0", o.eps);
  FP8LAB_CHECK(std::isfinite(o.weight_decay) && o.weight_decay >= 0.f,
               "optim.weight_decay {} must be finite and >= 0", o.weight_decay);
  FP8LAB_CHECK(std::isfinite(o.clip_grad_norm) && o.clip_grad_norm >= 0.f,
               "optim.clip_grad_norm {} must be finite and >= 0 (0: no clipping)",
               o.clip_grad_norm);
  FP8LAB_CHECK(o.warmup_steps >= 0 && o.decay_steps >= 0,
               "optim.warmup_steps {} and decay_steps {} must be >= 0", o.warmup_steps,
               o.decay_steps);
  FP8LAB_CHECK(t.log_every >= 0 && t.eval_every >= 0 && t.eval_batches >= 0 &&
                   t.checkpoint_every >= 0 && t.keep_checkpoints >= 0,
               "train.log_every {}, eval_every {}, eval_batches {}, checkpoint_every {} and "
               "keep_checkpoints {} must be >= 0",
               t.log_every, t.eval_every, t.eval_batches, t.checkpoint_every, t.keep_checkpoints);
  constexpr std::int64_t kInt32Max = (std::int64_t{1} << 31) - 1;
  FP8LAB_CHECK(t.loss_chunk_rows > 0 && t.loss_chunk_rows <= kInt32Max,
               "train.loss_chunk_rows {} must be in [1, 2^31)", t.loss_chunk_rows);
  FP8LAB_CHECK(t.ignore_index >= -1 && t.ignore_index <= kInt32Max,
               "train.ignore_index {} must be -1 (none) or a token id", t.ignore_index);
  // One optimizer step's tokens are indexed by int32 (micro_batch and grad_accum are > 0 here).
  const std::int64_t rows_limit = kInt32Max / c.model.seq_len;
  FP8LAB_CHECK(t.micro_batch <= rows_limit && t.grad_accum <= rows_limit / t.micro_batch,
               "train.micro_batch {} x grad_accum {} x model.seq_len {} tokens per step exceed "
               "2^31",
               t.micro_batch, t.grad_accum, c.model.seq_len);
}

}  // namespace

}  // namespace fp8lab
