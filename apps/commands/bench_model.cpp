// `fp8lab bench model`: the frozen resource check and the training step per arm (see
// fp8lab/bench_model.hpp).
#include "commands/bench_model.hpp"

#include "commands/json_output.hpp"

#include "fp8lab/backend.hpp"
#include "fp8lab/bench_model.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

namespace fp8lab::cli {
namespace {

struct BenchModelArgs {
  ModelBenchConfig config;
  std::vector<std::string> arms{"bf16", "fp8-mlp", "fp8-linears", "bf16+recompute"};
  JsonOutput json;
};

void run(BenchModelArgs& args) {
  ModelBenchConfig config = args.config;
  args.json.check_not_input({config.peer_json, config.checkpoint});
  // Under --json the report goes to stderr; stdout gets only the JSON.
  std::FILE* text = args.json.text();
  const BackendChoice choice = choose_backend(config.backend);
  config.backend = choice.name;  // every arm on the same backend
  std::fprintf(text, "%s\n", choice.line("bench model").c_str());
  std::fflush(text);
  for (const std::string& a : args.arms) config.arms.push_back(parse_model_bench_arm(a));
  // The peer's file is read first: a bad one fails before minutes of timing, not after.
  const nlohmann::json peer =
      config.peer_json.empty() ? nlohmann::json() : read_json_file(config.peer_json);
  ModelBenchResult result = run_model_bench(config);
  result.peer = peer;
  std::fputs(model_bench_report(result).c_str(), text);
  args.json.emit(model_bench_json(result));
}

}  // namespace

void add_bench_model(CLI::App& bench) {
  CLI::App* model = bench.add_subcommand(
      "model",
      "Whole-model resource check per precision arm: frozen forward+backward (median ms, peak "
      "MiB, first call, SHA-256 of weights and batch) and the full training step (tokens/s, peak "
      "MiB), beside the PyTorch peer's JSON, and the project's performance goals that the run's "
      "arms speak to, each with its limit and verdict. On the GPU each arm's timed repeats also "
      "report their energy (J per repeat, mean W, tokens per joule) from NVML's counter: the "
      "H200 runs every arm at its power limit, so energy shows what a change saved");
  model->footer(
      "Example, on the GPU machine (the peer first, in the same call):\n"
      "  python3 bench/peers/gpt_peer.py --preset gpt50m --json peer.json\n"
      "  fp8lab bench model --preset gpt50m --peer peer.json --op-times --json-file ours.json\n"
      "Example, on the CPU: fp8lab bench model --backend cpu --preset tiny --repeats 3 --json\n"
      "scripts/gpu-session bench-model does both for each preset in $PRESETS.");
  auto args = std::make_shared<BenchModelArgs>();
  ModelBenchConfig& c = args->config;
  c.backend = "auto";
  model
      ->add_option("--backend", c.backend,
                   "auto (cuda when built with CUDA and a GPU is present, else cpu) | cpu | cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  model->add_option("--preset", c.preset, "tiny, gpt50m, gpt350m, gpt1.3b")->capture_default_str();
  model->add_option("--batch", c.batch, "micro-batch (0: gpt50m 64, gpt350m 16, gpt1.3b 8)")
      ->capture_default_str();
  model->add_option("--seq-len", c.seq_len, "override the preset's T (0: keep)");
  model->add_option("--set", c.sets,
                    "model.KEY=VALUE overrides of the preset and kernels.KEY=VALUE choices "
                    "(kernels.attention=auto|mma-sync|wgmma|wgmma-ws|cudnn|cudnn-forward), as "
                    "in train");
  model
      ->add_option("--arms", args->arms,
                   "bf16, fp8-mlp or fp8-linears; an FP8 one optionally +rowwise or +blockwise "
                   "(the scaling recipe; tensorwise without), then optionally +bf16-wgrad (dW "
                   "GEMMs in bf16); then optionally +recompute (the MLP rebuilt in the "
                   "backward), then optionally +recompute-pointwise (RMSNorm and GELU outputs "
                   "rebuilt in the backward), then optionally +recompute-residual (the sums "
                   "after attention rebuilt in the backward), then optionally +recompute-qkv "
                   "(the qkv projection rebuilt in the backward), then optionally "
                   "+weights-from-master (FP8 "
                   "linears cast W from the fp32 master, keeping no bf16 copy of it), then "
                   "optionally +bf16-grads (the gradient buffer in bf16), then "
                   "optionally +bf16-moments (AdamW's moments in bf16), then optionally +cudnn or "
                   "+cudnn-forward (that arm's kernels.attention), in that order: e.g. "
                   "fp8-linears+blockwise+bf16-wgrad+recompute+recompute-pointwise+"
                   "recompute-residual+recompute-qkv+weights-from-master+bf16-grads+bf16-moments+"
                   "cudnn-forward")
      ->capture_default_str();
  model->add_option("--repeats", c.repeats, "timed repeats (median reported)")
      ->capture_default_str();
  model
      ->add_option("--rounds", c.rounds,
                   "run every arm this many times, the arms interleaved (a b a b ...), and pool "
                   "the repeats: drift of the GPU over the run then reaches every arm alike; the "
                   "report adds each round's step median")
      ->capture_default_str();
  model->add_option("--warmup", c.warmup, "untimed repeats after the first call")
      ->capture_default_str();
  model
      ->add_option("--warmup-s", c.warmup_s,
                   "and warm up for at least this many seconds, the first call included: on the "
                   "H200 each arm's steps 1-2 s into its run were 5-15% slow (the power ramp)")
      ->capture_default_str();
  model->add_flag("!--no-frozen", c.frozen, "skip the frozen forward+backward check");
  model->add_flag("!--no-step", c.train_step, "skip the training-step benchmark");
  model->add_flag("!--no-energy", c.energy,
                  "skip the energy windows: by default each arm's timed repeats are followed by "
                  "as many calls with the GPU's energy counter (NVML) read on a thread of its "
                  "own, and their energy is kept where those calls ran within 5% of the timed "
                  "ones (the times never run beside the reads)");
  model->add_flag("--op-times", c.op_times,
                  "CUDA: time one more training step op by op and print the breakdown");
  model->add_option("--loss-chunk-rows", c.loss_chunk_rows, "rows per classifier chunk")
      ->capture_default_str();
  model->add_option("--seed", c.seed, "seed of the weights (init) and the batch")
      ->capture_default_str();
  model->add_option("--checkpoint", c.checkpoint,
                    "weights from this checkpoint directory (or .safetensors) instead of init");
  model->add_option("--peer", c.peer_json, "JSON from bench/peers/gpt_peer.py (same run)");
  model->add_option("--commit", c.commit, "source commit recorded in the JSON");
  args->json.add_options(*model, "the results");
  model->callback([args] { run(*args); });
}

}  // namespace fp8lab::cli
