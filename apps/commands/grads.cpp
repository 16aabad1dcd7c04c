// `fp8lab grads`: one forward + backward of a checkpoint's model on a seeded batch, written out
// (loss and every parameter gradient) for an external check such as tests/reference/gpt_torch.py.
//
// The batch: B rows of seq_len + 1 tokens drawn uniformly from [0, vocab) by Philox keyed by
// --seed (stream "grads.tokens", index row * (seq_len + 1) + t, token = (u32 * vocab) >> 32);
// inputs are a row's first seq_len tokens, targets the next ones. No target is ignored, so the
// gradient is that of the mean loss over B * seq_len tokens (grad_scale = 1 / count), exactly
// what one training step with that batch would apply before clipping.
//
// The output is a safetensors file: "inputs" and "targets" (I32 [B, T]), "loss" (F32 [1]) and
// "grad.<parameter name>" (F32, the parameter's shape) for every parameter; __metadata__ holds
// "format": "fp8lab-grads", the policy, compute mode, gradient dtype ("grads": fp32 | bf16, the
// values widened exactly), each memory option, backend, seed, the checkpoint directory,
// its weights' SHA-256 (params_sha256) and the loss in full precision.
#include "command_registry.hpp"
#include "commands/json_output.hpp"
#include "commands/memory_flags.hpp"
#include "fp8lab/backend.hpp"
#include "fp8lab/checkpoint.hpp"
#include "fp8lab/config.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/evaluate.hpp"
#include "fp8lab/model.hpp"
#include "fp8lab/rng.hpp"
#include "fp8lab/safetensors.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace fp8lab::cli {
namespace {

struct GradsOptions {
  std::string checkpoint;
  std::string backend = "cpu";
  std::string policy = "bf16";
  std::string compute = "mixed";
  std::string grads = "fp32";
  MemoryFlags memory;
  long long batch = 2;
  unsigned long long seed = 1;
  long long loss_chunk_rows = 0;
  std::string out;
  JsonOutput json;
};

// B rows of seq_len + 1 uniform tokens -> inputs, targets [B * seq_len].
void draw_batch(std::uint64_t seed, std::int64_t rows, std::int64_t seq_len, std::int64_t vocab,
                std::vector<std::int32_t>& inputs, std::vector<std::int32_t>& targets) {
  const std::uint64_t stream = stream_id("grads.tokens");
  inputs.resize(static_cast<std::size_t>(rows * seq_len));
  targets.resize(inputs.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    std::vector<std::int32_t> row(static_cast<std::size_t>(seq_len + 1));
    for (std::int64_t t = 0; t <= seq_len; ++t) {
      const std::uint64_t u =
          random_u32(seed, stream, static_cast<std::uint64_t>(r * (seq_len + 1) + t));
      row[static_cast<std::size_t>(t)] =
          static_cast<std::int32_t>((u * static_cast<std::uint64_t>(vocab)) >> 32);
    }
    for (std::int64_t t = 0; t < seq_len; ++t) {
      inputs[static_cast<std::size_t>(r * seq_len + t)] = row[static_cast<std::size_t>(t)];
      targets[static_cast<std::size_t>(r * seq_len + t)] = row[static_cast<std::size_t>(t + 1)];
    }
  }
}

void run_grads(const GradsOptions& o) {
  FP8LAB_CHECK(o.batch > 0, "--batch must be positive, got {}", o.batch);
  const std::filesystem::path dir = resolve_checkpoint_dir(o.checkpoint);
  o.json.check_not_input({dir / "meta.json", dir / "model.safetensors", o.out});
  const CheckpointMeta meta = read_checkpoint_meta(dir);
  const ModelConfig& mc = meta.config.model;

  PrecisionConfig precision;
  precision.policy = parse_policy(o.policy);
  o.memory.apply(precision);
  precision.compute = parse_compute_mode(o.compute);
  precision.grads = parse_state_dtype(o.grads, "--grads");
  precision.validate();
  const char* grads_name = state_dtype_name(precision.grads);
  const std::int64_t chunk =
      o.loss_chunk_rows > 0 ? o.loss_chunk_rows : meta.config.train.loss_chunk_rows;

  auto backend = make_backend(o.backend);
  GptModel model(mc, precision, o.batch, *backend);
  load_checkpoint(dir, model, nullptr);

  std::vector<std::int32_t> inputs, targets;
  draw_batch(o.seed, o.batch, mc.seq_len, mc.vocab_size, inputs, targets);
  const std::int64_t count = static_cast<std::int64_t>(targets.size());
  const int ignore = -1;  // every drawn target is in [0, vocab): none is ignored
  model.zero_grads();
  const LossSums sums =
      model.forward_backward(inputs.data(), targets.data(), 1.f / static_cast<float>(count), ignore,
                             static_cast<int>(chunk));
  backend->synchronize();
  FP8LAB_CHECK(sums.counted == count, "forward_backward counted {} targets of {}", sums.counted,
               count);
  const double loss = sums.loss_sum / static_cast<double>(count);
  const float loss_f32 = static_cast<float>(loss);
  const std::vector<float> grads = model.get_gradients();

  const Shape bt{o.batch, mc.seq_len};
  std::vector<SafetensorsTensor> tensors{{"inputs", DType::i32, bt, inputs.data()},
                                         {"targets", DType::i32, bt, targets.data()},
                                         {"loss", DType::f32, Shape{1}, &loss_f32}};
  for (const ParamInfo& p : model.layout().params()) {
    tensors.push_back({"grad." + p.name, DType::f32, p.shape, grads.data() + p.offset});
  }
  SafetensorsMetadata metadata{{"format", "fp8lab-grads"},
                               {"policy", policy_name(precision.policy)},
                               {"compute", compute_mode_name(precision.compute)},
                               {"grads", grads_name},
                               {"backend", backend->name()},
                               {"seed", std::to_string(o.seed)},
                               {"batch", std::to_string(o.batch)},
                               {"loss_chunk_rows", std::to_string(chunk)},
                               {"loss", fmt::format("{:.17g}", loss)},
                               {"counted", std::to_string(count)},
                               {"checkpoint", std::filesystem::absolute(dir).string()},
                               {"step", std::to_string(meta.step)},
                               {"params_sha256", meta.params_sha256},
                               {"model_config", to_json(mc).dump()}};
  for (const MemoryOption& m : kMemoryOptions)
    metadata.emplace(std::string(m.key), precision.*m.on ? "true" : "false");
  const std::vector<std::uint8_t> bytes = encode_safetensors(tensors, metadata);
  write_file_atomic(o.out, bytes.data(), bytes.size());
  nlohmann::json summary{{"checkpoint", std::filesystem::absolute(dir).string()},
                         {"step", meta.step},
                         {"policy", policy_name(precision.policy)},
                         {"compute", compute_mode_name(precision.compute)},
                         {"grads", grads_name},
                         {"backend", backend->name()},
                         {"batch", o.batch},
                         {"seq_len", mc.seq_len},
                         {"seed", o.seed},
                         {"loss", loss},
                         {"counted", count},
                         {"tensors", model.layout().params().size()},
                         {"out", o.out}};
  std::string memory_labels;
  for (const MemoryOption& m : kMemoryOptions) {
    summary[std::string(m.key)] = precision.*m.on;
    if (precision.*m.on) memory_labels += fmt::format(" + {}", m.label);
  }
  o.json.emit(summary);
  if (o.json.to_stdout) return;
  std::printf("fp8lab grads: %s (step %lld), policy %s%s, compute %s, %s gradients, backend %s\n",
              dir.string().c_str(), static_cast<long long>(meta.step),
              policy_name(precision.policy), memory_labels.c_str(),
              compute_mode_name(precision.compute), grads_name, backend->name().c_str());
  std::printf("  batch %lld x %lld tokens (seed %llu): loss %.9f\n", o.batch,
              static_cast<long long>(mc.seq_len), o.seed, loss);
  std::printf("  wrote %zu gradient tensors to %s\n", model.layout().params().size(),
              o.out.c_str());
}

const CommandRegistration registration{CommandSpec{
    "grads", "Loss and every parameter gradient of a checkpoint on a seeded batch, as safetensors",
    [](CLI::App& sub) {
      auto o = std::make_shared<GradsOptions>();
      sub.footer(
          "One GptModel::forward_backward on B rows of uniform random tokens drawn from --seed\n"
          "(targets = the next tokens, none ignored, grad_scale = 1 / (B * seq_len)). Writes\n"
          "inputs, targets (I32 [B, T]), loss (F32 [1]) and grad.<name> (F32) per parameter.\n"
          "Check it against PyTorch in float64:\n"
          "  python3 tests/reference/gpt_torch.py --checkpoint DIR --grads FILE --out JSON\n"
          "Example: fp8lab grads --checkpoint runs/a --policy fp8-mlp --batch 2 --out "
          "g.safetensors\n");
      sub.add_option("--checkpoint", o->checkpoint,
                     "a run directory, its checkpoints/ directory, or one step_N checkpoint")
          ->required();
      sub.add_option("--backend", o->backend, "cpu | cuda")
          ->check(CLI::IsMember({"cpu", "cuda"}))
          ->capture_default_str();
      sub.add_option("--policy", o->policy, "bf16 | fp8-mlp | fp8-linears")
          ->check(CLI::IsMember({"bf16", "fp8-mlp", "fp8-linears"}))
          ->capture_default_str();
      sub.add_option("--compute", o->compute,
                     "mixed (bf16 activations, the training path) | fp32 (every tensor fp32)")
          ->check(CLI::IsMember({"mixed", "fp32"}))
          ->capture_default_str();
      sub.add_option("--grads", o->grads,
                     "fp32 | bf16: the gradient buffer's dtype (precision.grads; bf16 under "
                     "compute mixed only). The file holds F32 either way, bf16 widened exactly")
          ->check(CLI::IsMember({"fp32", "bf16"}))
          ->capture_default_str();
      o->memory.add_to(sub, /*with_key=*/false);
      sub.add_option("--batch", o->batch, "rows of seq_len tokens")->capture_default_str();
      sub.add_option("--seed", o->seed, "seed of the token batch")->capture_default_str();
      sub.add_option("--loss-chunk-rows", o->loss_chunk_rows,
                     "rows of logits at a time (0: the checkpoint's train.loss_chunk_rows)")
          ->capture_default_str();
      sub.add_option("--out", o->out, "the safetensors file to write")->required();
      o->json.add_options(sub, "a summary (checkpoint, policy, loss, out, ...)");
      sub.callback([o] { run_grads(*o); });
    }}};

}  // namespace
}  // namespace fp8lab::cli
