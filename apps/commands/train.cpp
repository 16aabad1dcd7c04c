// `fp8lab train`: train a GPT from a preset or config file into a run directory.
//
// Precedence, lowest first: the preset (or the --config file, which may name a preset), then
// each --set key=value in order, then the named flags (--policy, --backend, the memory options'
// flags such as --mlp-recompute, --lean-memory, --steps). The result is validated once, after
// all of them, so the order of --set options never decides whether a config is accepted.
// With --resume and neither --preset nor --config, the run directory's config.json is the base.
#include "command_registry.hpp"
#include "commands/json_output.hpp"
#include "commands/memory_flags.hpp"
#include "fp8lab/backend.hpp"
#include "fp8lab/config.hpp"
#include "fp8lab/distributed.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"
#include "fp8lab/trainer.hpp"
#include "openmp_policy.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fp8lab::cli {
namespace {

struct TrainOptions {
  std::string preset;
  std::string config_file;
  std::vector<std::string> sets;
  std::string policy;
  std::string backend;
  MemoryFlags memory;
  bool lean_memory = false;
  std::optional<long long> steps;
  std::string out;
  bool resume = false;
  bool force = false;
  bool print_config = false;
  bool no_progress = false;
  JsonOutput json;
};

RunConfig resolve_config(const TrainOptions& o) {
  FP8LAB_CHECK(o.preset.empty() || o.config_file.empty(), "give --preset or --config, not both");
  RunConfig config;
  if (!o.config_file.empty()) {
    config = load_run_config(o.config_file);
  } else if (!o.preset.empty()) {
    config = run_preset(o.preset);
  } else if (o.resume) {
    config = load_run_config(std::filesystem::path(o.out) / "config.json");
  } else {
    FP8LAB_FAIL(ErrorKind::invalid_argument, "give --preset NAME ({}) or --config FILE",
                "tiny, gpt50m, gpt350m, gpt1.3b");
  }
  for (const std::string& s : o.sets) apply_override(config, s);
  if (!o.policy.empty()) config.precision.policy = parse_policy(o.policy);
  if (!o.backend.empty()) config.backend = o.backend;
  o.memory.apply(config.precision);
  if (o.lean_memory) enable_lean_memory(config);  // after --policy and the sets it depends on
  if (o.steps) config.train.steps = *o.steps;
  config.validate();
  return config;
}

void run_train(const TrainOptions& o) {
  RunConfig config = resolve_config(o);
  if (o.print_config) {  // `fp8lab study` compares arms this way before training them
    std::printf("%s\n", to_json(config).dump(2).c_str());
    return;
  }
  const std::filesystem::path run_dir(o.out);
  o.json.check_not_input({o.config_file, run_dir / "config.json", run_dir / "run.json",
                          run_dir / "metrics.jsonl"});
  const BackendChoice choice = choose_backend(config.backend);
  if (choice.name == "cpu") ensure_passive_openmp();
  // Under --json the training log goes to stderr; stdout gets only run.json's summary.
  std::optional<StdoutToStderr> quiet_stdout;
  quiet_stdout.emplace(o.json.to_stdout);
  config.backend = choice.name;  // the run records the backend it ran on
  // Data parallelism (docs/distributed.md): a launcher's variables make this process one rank.
  const DistributedEnv env = read_distributed_env(std::getenv);
  FP8LAB_CHECK(env.world_size == 1 || config.backend == "cuda",
               "{} ranks were launched ({}), but data parallelism needs backend cuda (NCCL), not "
               "'{}'",
               env.world_size, env.launcher, config.backend);
  const bool use_nccl = env.launcher != "none" && config.backend == "cuda";
  if (use_nccl) use_local_cuda_device(env);  // before the backend picks its device
  if (env.rank == 0) std::printf("%s\n", choice.line("train").c_str());
  auto backend = make_backend(config.backend);
  std::unique_ptr<Communicator> comm;
  if (use_nccl) {
    comm = make_nccl_communicator_from_env(env);
    if (env.rank == 0)
      std::printf("fp8lab train: %d ranks through NCCL %d (%s launch)\n", env.world_size,
                  nccl_version(), env.launcher.c_str());
  }
  TrainerOptions options;
  options.comm = comm.get();
  options.resume = o.resume;
  options.force = o.force;
  options.progress_bar = !o.no_progress && ::isatty(STDERR_FILENO) == 1;
  options.log = stdout;
  Trainer trainer(config, o.out, *backend, options);
  trainer.run();
  if (env.rank != 0) return;
  std::printf("done: %lld steps (%lld skipped), run directory %s\n",
              static_cast<long long>(trainer.step()),
              static_cast<long long>(trainer.skipped_steps()), o.out.c_str());
  quiet_stdout.reset();
  o.json.emit(read_json_file(run_dir / "run.json"));
}

const CommandRegistration registration{CommandSpec{
    "train", "Train a GPT (preset or config file) into a run directory; --resume continues it",
    [](CLI::App& sub) {
      auto o = std::make_shared<TrainOptions>();
      sub.add_option("--preset", o->preset, "tiny | gpt50m | gpt350m | gpt1.3b");
      sub.add_option("--config", o->config_file, "a JSON run config (may name a \"preset\")");
      sub.add_option("--set", o->sets,
                     "override a config key, e.g. --set optim.lr=3e-4 (repeatable)")
          ->take_all();
      sub.add_option("--backend", o->backend,
                     "auto | cpu | cuda (overrides the config's backend; auto: cuda when built "
                     "with CUDA and a GPU is present, else cpu)")
          ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
      sub.add_option("--policy", o->policy, "bf16 | fp8-mlp | fp8-linears")
          ->check(CLI::IsMember({"bf16", "fp8-mlp", "fp8-linears"}));
      o->memory.add_to(sub, /*with_key=*/true);
      sub.add_flag("--lean-memory", o->lean_memory,
                   "every memory option that keeps the gradients: the four recomputes (residual "
                   "recompute under compute mixed) and, with FP8 linears, "
                   "precision.fp8_weights_from_master");
      sub.add_option("--steps", o->steps, "optimizer steps (overrides train.steps)");
      sub.add_option("--out", o->out,
                     "run directory (config.json, run.json, metrics.jsonl, checkpoints/)")
          ->required();
      sub.add_flag("--resume", o->resume,
                   "continue from the run directory's latest checkpoint (the config may differ "
                   "from the checkpoint's only in train.steps, the log, eval and checkpoint "
                   "cadence, kernels.attention and the memory options: the recomputes and "
                   "precision.fp8_weights_from_master)");
      sub.add_flag("--force", o->force,
                   "write into --out even when fp8lab did not create it (files there named "
                   "config.json, run.json, metrics.jsonl or checkpoints/ are replaced)");
      sub.add_flag("--print-config", o->print_config,
                   "print the resolved config as JSON and exit without training");
      sub.add_flag("--no-progress", o->no_progress, "no progress bar even on a terminal");
      o->json.add_options(sub, "the run's final summary (its run.json)");
      sub.footer(
          "Example: fp8lab train --preset tiny --steps 200 --out runs/tiny\n"
          "Example: fp8lab train --preset gpt50m --policy fp8-mlp --set optim.lr=3e-4 --out runs/a "
          "--json\n"
          "Example: fp8lab train --out runs/a --resume --steps 400\n"
          "Example, the same gradients in less memory (docs/training.md has each option's "
          "cost):\n"
          "  fp8lab train --preset gpt1.3b --policy fp8-linears --lean-memory --out runs/big\n");
      sub.callback([o] { run_train(*o); });
    }}};

}  // namespace
}  // namespace fp8lab::cli
