// `fp8lab eval`: score a checkpoint on held-out shards (CE excluding specials, PPL, bits per byte).
#include "command_registry.hpp"
#include "commands/json_output.hpp"
#include "fp8lab/backend.hpp"
#include "fp8lab/evaluate.hpp"
#include "fp8lab/output_dir.hpp"

#include <unistd.h>

#include <cstdio>
#include <memory>

namespace fp8lab::cli {
namespace {

struct EvalCliOptions {
  EvalOptions eval;
  JsonOutput json;
};

// --json-file must not replace a file the evaluation reads.
void check_json_file(const EvalCliOptions& o) {
  if (o.json.file.empty()) return;
  const std::filesystem::path ckpt = resolve_checkpoint_dir(o.eval.checkpoint);
  std::vector<std::filesystem::path> inputs{ckpt / "meta.json", ckpt / "model.safetensors",
                                            ckpt / "optimizer.safetensors",
                                            ckpt.parent_path() / "latest"};
  if (!std::filesystem::is_directory(o.eval.data)) inputs.push_back(o.eval.data);
  o.json.check_not_input(inputs);
}

void run_eval(EvalCliOptions& o) {
  check_json_file(o);
  o.eval.progress = !o.json.to_stdout && ::isatty(STDERR_FILENO) == 1;
  const BackendChoice choice = choose_backend(o.eval.backend);
  o.eval.backend = choice.name;
  // The first line of output; with --json, stdout holds only the JSON, so it goes to stderr.
  std::fprintf(o.json.text(), "%s\n", choice.line("eval").c_str());
  const EvalReport r = evaluate_checkpoint(o.eval);
  o.json.emit(r.to_json());
  if (o.json.to_stdout) return;
  const auto& m = r.metrics;
  std::printf("fp8lab eval: %s (step %lld) under policy %s%s\n", r.checkpoint_dir.c_str(),
              static_cast<long long>(r.step), r.policy.c_str(),
              r.policy == "bf16" ? "" : (" (" + r.fp8_recipe + " recipe)").c_str());
  if (r.averaged_steps.size() > 1) {
    std::string steps;
    for (std::int64_t s : r.averaged_steps) steps += (steps.empty() ? "" : ", ") + std::to_string(s);
    std::printf("  weights         the mean of the checkpoints of steps %s\n", steps.c_str());
  }
  std::printf("  cross-entropy   %.6f nats/token (excluding %s)\n", m.ce_nats,
              r.excluded_token ? ("token " + std::to_string(*r.excluded_token)).c_str() : "nothing");
  std::printf("  perplexity      %.4f\n", m.perplexity);
  std::printf("  bits per byte   %.6f\n", m.bits_per_byte);
  std::printf("  targets         %lld counted of %lld (%lld excluded), %lld bytes\n",
              static_cast<long long>(m.targets_counted), static_cast<long long>(m.targets_total),
              static_cast<long long>(m.targets_excluded), static_cast<long long>(m.bytes_counted));
  std::printf("  batching        %lld batches of %lld rows x %lld tokens, %s order\n",
              static_cast<long long>(r.batches), static_cast<long long>(r.batch_rows),
              static_cast<long long>(r.seq_len), r.order.c_str());
  std::printf("  weights sha256  %s\n", r.params_sha256.c_str());
}

void setup_eval(CLI::App& sub) {
  auto o = std::make_shared<EvalCliOptions>();
  sub.footer(
      "Loads the checkpoint's weights into a model built under --policy (any policy: a run trained\n"
      "in fp8-mlp can be scored in bf16 too) and reads the held-out split once, in order. Rows are\n"
      "seq_len+1 consecutive tokens overlapping by one, so every token but the first is a target\n"
      "exactly once. Targets equal to <|endoftext|> are not counted for GPT-2 vocabularies.\n"
      "  CE  = mean -ln p(target) over counted targets;  PPL = exp(CE)\n"
      "  BPB = sum of -log2 p(target) / UTF-8 bytes of the counted targets\n"
      "To reproduce a training run's validation loss, use its micro-batch as --batch, its\n"
      "eval_batches as --max-batches and its data order and data_seed.\n"
      "Example: fp8lab eval --checkpoint runs/a --policy bf16 --data data/kjv --json\n");
  sub.add_option("--checkpoint", o->eval.checkpoint,
                 "a run directory, its checkpoints/ directory, or one step_N checkpoint")->required();
  sub.add_option("--policy", o->eval.policy, "bf16 | fp8-mlp | fp8-linears")
      ->required()->check(CLI::IsMember({"bf16", "fp8-mlp", "fp8-linears"}));
  sub.add_option("--recipe", o->eval.fp8_recipe,
                 "FP8 scaling recipe of an FP8 policy: tensorwise | rowwise | blockwise "
                 "(default: the one the checkpoint was trained with)")
      ->check(CLI::IsMember({"tensorwise", "rowwise", "blockwise"}));
  sub.add_option("--data", o->eval.data,
                 "held-out shards: a .bin, a directory of <split>_*.bin, or a manifest.json")->required();
  sub.add_option("--split", o->eval.split, "which split of a directory or manifest")->capture_default_str();
  sub.add_option("--batch", o->eval.batch_rows, "rows per batch (0: the checkpoint's micro-batch)")
      ->capture_default_str();
  sub.add_option("--max-batches", o->eval.max_batches, "stop after this many batches (0: all)")
      ->capture_default_str();
  sub.add_option("--average-last", o->eval.average_last,
                 "score the mean weights of the run's last N checkpoints up to the one chosen "
                 "(the run must keep them: train.keep_checkpoints >= N)")
      ->capture_default_str();
  sub.add_option("--order", o->eval.order, "sequential | shuffled")
      ->check(CLI::IsMember({"sequential", "shuffled"}))->capture_default_str();
  sub.add_option("--seed", o->eval.seed, "order seed for --order shuffled")->capture_default_str();
  sub.add_option("--exclude-token", o->eval.exclude_token, "auto | none | a token id")
      ->capture_default_str();
  sub.add_option("--backend", o->eval.backend,
                 "auto (cuda when built with CUDA and a GPU is present, else cpu) | cpu | cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  o->json.add_options(sub, "the report");
  sub.callback([o] { run_eval(*o); });
}

const CommandRegistration kRegistration{
    {"eval", "Score a checkpoint on held-out shards: CE excluding specials, perplexity, bits per byte",
     setup_eval}};

}  // namespace
}  // namespace fp8lab::cli
