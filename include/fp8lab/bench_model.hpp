// `fp8lab bench model`: the frozen resource check and the training-step benchmark of the whole
// GPT, per precision arm, on one backend (the GPU; the CPU runs it too, for tests).
//
// Frozen check: the same weights (init seed or a checkpoint's) and the same batch for every arm,
// `repeats` forward+backward passes without an optimizer: median ms, peak MiB, first-call time,
// SHA-256 of the weights, inputs and targets (equal hashes prove the arms saw the same problem).
// Training step: forward+backward, gradient norm and clipping, fused AdamW and the bf16 weight
// refresh, exactly the Trainer's step: median ms, tokens/s and peak MiB (optimizer moments in).
// On the GPU both also report the energy of a repeat (J, mean W, tokens per joule) from the
// GPU's energy counter (bench/energy_counter.hpp), sampled on a thread and interpolated at the
// window's ends (bench/energy_sampler.hpp says why), over a window of as many calls after the
// timed ones: the counter is never read beside the timed repeats (see energy_joules).
// The PyTorch peer (bench/peers/gpt_peer.py, run in the same device call) is read from its JSON
// and the ratios printed beside each arm.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fp8lab/config.hpp"
#include "fp8lab/kernel_options.hpp"

namespace fp8lab {

struct ModelBenchArm {
  std::string name;  // "bf16", "fp8-mlp", "fp8-linears", "bf16+recompute", ...
  PrecisionConfig precision;
  DType moments = DType::f32;  // OptimConfig::moments of the train step's AdamW
  // "+cudnn", "+cudnn-forward": this arm's attention family, in place of the bench's
  // kernels.attention, so that one run (one set of interleaved rounds) compares the families.
  std::optional<AttentionKernels> attention;
};
// "bf16", "fp8-mlp", "fp8-linears", FP8 ones optionally with "+rowwise" or "+blockwise" (the
// scaling recipe) and "+bf16-wgrad", each optionally with "+recompute", then optionally
// "+recompute-pointwise" (PrecisionConfig::pointwise_recompute), then optionally
// "+recompute-residual" (PrecisionConfig::residual_recompute), then optionally
// "+recompute-qkv" (PrecisionConfig::qkv_recompute), then optionally
// "+weights-from-master" (PrecisionConfig::fp8_weights_from_master), then optionally
// "+bf16-grads" (PrecisionConfig::grads), then optionally "+bf16-moments" (OptimConfig::moments),
// then optionally "+cudnn" or "+cudnn-forward" (ModelBenchArm::attention); throws naming bad names.
ModelBenchArm parse_model_bench_arm(const std::string& name);

struct ModelBenchConfig {
  std::string backend = "cuda";
  std::string preset = "gpt50m";
  std::int64_t batch = 0;         // micro-batch; 0: the preset's (gpt50m 64, gpt350m 16, gpt1.3b 8)
  std::int64_t seq_len = 0;       // 0: the preset's
  // "model.KEY=VALUE" and "kernels.KEY=VALUE" overrides of the preset (as train --set).
  std::vector<std::string> sets;
  // The kernel families every arm runs: from the kernels.* sets (run_model_bench fills it).
  KernelOptions kernels;
  std::vector<ModelBenchArm> arms;
  int warmup = 3;
  // ... and warm-up for at least this many seconds, the first call included. On the H200 the
  // steps 1-2 s into each arm's run were 5-15% slower than the rest (every arm, both presets):
  // the GPU's power ramp. bench/peers/gpt_peer.py waits the same.
  double warmup_s = 3.0;
  int repeats = 25;
  // Each arm is run this many times, the arms interleaved (a b c a b c ...), and its repeats
  // pooled: the GPU's drift over a run then reaches every arm alike instead of the last ones.
  int rounds = 1;
  bool frozen = true;      // the frozen forward+backward check
  bool train_step = true;  // the full training step
  std::int64_t loss_chunk_rows = 4096;
  std::uint64_t seed = 1234;  // weights (init) and batch
  bool op_times = false;      // CUDA: one extra timed step with per-op GPU times
  bool energy = true;         // false: no energy counter and no sampling thread
  // The energy window's calls may be this much slower than the timed ones (median over median)
  // before its energy is withheld (see energy_joules).
  double energy_slowdown_limit = 1.05;
  std::string checkpoint;     // optional: weights from this checkpoint directory instead
  std::string peer_json;      // optional: bench/peers/gpt_peer.py's results
  std::string commit;
  // The GPU's cumulative energy counter in joules. It is never read while the timed repeats
  // run: after them, each arm runs as many calls again in an energy window of its own, with a
  // bench::EnergySampler polling the counter on a thread of its own (so it must be callable
  // from another thread), and untimed calls on both sides until the counter moves. That
  // window's energy is kept only when its calls' median is within energy_slowdown_limit of the
  // timed median (ModelBenchTiming::energy_slowdown). Empty: NVML's counter on the cuda backend
  // (when libnvidia-ml loads), none on the cpu backend, and no thread. Tests give their own. A read
  // that fails (nullopt) ends the sampling: a window it leaves unbracketed is not measured.
  std::function<std::optional<double>()> energy_joules;
};

struct ModelBenchTiming {
  double median_ms = 0, p10_ms = 0, p90_ms = 0;  // over every round's repeats
  double first_call_ms = 0;                      // of the first round
  double peak_mib = 0;                           // the largest of the rounds'
  double tokens_per_s = 0;                       // at median_ms
  std::vector<double> samples_ms;                // every timed repeat, in run order
  std::vector<double> round_medians_ms;          // one per round
  // Energy over as many calls as the timed repeats, in every round's energy window (J):
  // joules_per_repeat is then the energy of one repeat. nullopt: not measured in some round.
  std::optional<double> energy_j;
  // The wall time energy_j covers (s): each round's energy window from just before its first
  // call to just after its last one, host gaps included; 0 where energy_j is not measured.
  double energy_window_s = 0;
  // The energy window's median call over the timed median (the largest of the rounds'): how
  // much reading the counter slowed the calls. Above the config's energy_slowdown_limit the
  // energy is left unmeasured; 0 where no window ran.
  double energy_slowdown = 0;
};

// From a timing's energy: joules per repeat, the mean power over the timed windows (W, energy
// over energy_window_s), and tokens per joule at `tokens` per repeat; nullopt where the energy
// was not measured.
std::optional<double> joules_per_repeat(const ModelBenchTiming& t);
std::optional<double> mean_watts(const ModelBenchTiming& t);
std::optional<double> tokens_per_joule(const ModelBenchTiming& t, std::int64_t tokens);

struct ModelBenchArmResult {
  std::string arm;
  std::string attention;  // the attention family it asked for (attention_kernels_name)
  ModelBenchTiming frozen, step;
  double loss = 0;  // of the frozen batch
  // The train step's loss on its batch at the first call and at the last timed repeat (NaN
  // without a train step). Every repeat updates the weights: a step whose loss turned non-finite
  // times a diverged model, and the report says so.
  double step_loss_first = std::numeric_limits<double>::quiet_NaN();
  double step_loss_last = std::numeric_limits<double>::quiet_NaN();
  struct OpShare {
    std::string op;
    double ms = 0;       // GPU time
    double host_ms = 0;  // host time inside the op's calls
    int calls = 0;
  };
  std::vector<OpShare> op_times;  // one training step's GPU time per op (--op-times)
  double op_step_wall_ms = 0;     // that step's wall-clock time, synchronised at its end
  // The training state once the optimizer exists (the train step's model): bytes of the
  // parameters (master and working copies), the gradients and the optimizer's moments, as the
  // backend accounts them (MemoryStats::current_by_kind). All zero without a train step.
  struct StateBytes {
    std::int64_t parameters = 0, gradients = 0, optimizer = 0;
    std::int64_t total() const { return parameters + gradients + optimizer; }
  } state;
  std::string weights_sha256, inputs_sha256, targets_sha256;
};

struct ModelBenchResult {
  ModelBenchConfig config;
  ModelConfig model;
  std::int64_t parameters = 0;
  std::vector<ModelBenchArmResult> arms;
  nlohmann::json peer;  // null when no peer JSON was given
  std::string device;
  // Where the energy numbers come from ("NVML total energy of GPU ..."), or "not measured: "
  // and why.
  std::string energy_source;
};

// One of the project's performance goals (docs/performance.md, "Goals") checked against this
// run: `value` compared with `limit` by `relation` ("<", "<=" or ">="); `detail` names the
// numbers it came from. Step medians and step peaks, as the goals are stated.
struct ModelBenchTargetCheck {
  std::string target;
  double value = 0, limit = 0;
  std::string relation;
  bool met = false;
  std::string detail;
};

// The goals this run's arms (and peer) can speak to. A goal stated for one size is checked at
// that preset only: fp8-mlp against bf16 at gpt50m, fp8-linears against bf16 at gpt1.3b; the
// others at every preset.
std::vector<ModelBenchTargetCheck> model_bench_targets(const ModelBenchResult& result);

ModelBenchResult run_model_bench(const ModelBenchConfig& config);
std::string model_bench_report(const ModelBenchResult& result);
nlohmann::json model_bench_json(const ModelBenchResult& result);

}  // namespace fp8lab
