// `fp8lab bench model` (see fp8lab/bench_model.hpp): runs the arms, one fresh backend each, so
// each arm's peak is its own.
#include "fp8lab/bench_model.hpp"

#include "bench/energy_counter.hpp"
#include "bench/energy_sampler.hpp"
#include "bench/model_bench_peer.hpp"
#include "fp8lab/backend.hpp"
#include "fp8lab/checkpoint.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/model.hpp"
#include "fp8lab/optimizer.hpp"
#include "fp8lab/rng.hpp"
#include "core/sha256.hpp"

#if defined(FP8LAB_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include "cuda_backend/cuda_backend.hpp"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

namespace fp8lab {
namespace {

using Clock = std::chrono::steady_clock;
using bench::peer_arm;
using bench::peer_value;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The untimed calls after the first (which began at `first`): at least cfg.warmup of them, and
// until cfg.warmup_s seconds have passed since `first` (see ModelBenchConfig::warmup_s).
template <typename Call>
void warm_up(const ModelBenchConfig& cfg, Clock::time_point first, Call&& call) {
  for (int i = 0; i < cfg.warmup || ms_since(first) < 1e3 * cfg.warmup_s; ++i) call();
}

// More untimed calls until the sampler has seen the counter move after `t`, so that a window
// ending (or starting) at `t` is bracketed by moves with the same work on both sides of `t`
// (bench/energy_sampler.hpp). At most 50 calls or 2 s: past that the window's energy is left
// unmeasured, not wrong. A failed read ends it at once: no move will be seen.
template <typename Call>
void until_counter_moves(const bench::EnergySampler& sampler, Clock::time_point t, Call&& call) {
  const auto start = Clock::now();
  for (int i = 0; i < 50 && Clock::now() - start < std::chrono::seconds(2); ++i) {
    if (sampler.has_change_after(t) || sampler.read_failed()) return;
    call();
  }
}

// `n` calls, each timed on its own (the call synchronizes).
template <typename Call>
std::vector<double> timed_calls(int n, Call&& call) {
  std::vector<double> times;
  for (int i = 0; i < n; ++i) {
    const auto start = Clock::now();
    call();
    times.push_back(ms_since(start));
  }
  return times;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The energy of a window of its own, right after the timed repeats: as many calls, with a
// sampler polling the counter (bench/energy_sampler.hpp) from just before it, and untimed calls
// on both sides until the counter has moved. Why not the timed repeats' own window: reading the
// counter can slow the calls beside it (with NVML polled on its thread, a gpt50m blockwise step
// took 710 ms against 123 ms without; docs/performance.md), so the timing runs with no reads
// at all, and this window's energy is kept only when its calls' median is within
// cfg.energy_slowdown_limit of the timed median: else it is left unmeasured, and
// out.energy_slowdown says why.
template <typename Call>
void measure_energy(const ModelBenchConfig& cfg, double timed_median_ms, Call&& call,
                    ModelBenchTiming& out) {
  const auto sampling_from = Clock::now();
  const bench::EnergySampler sampler(cfg.energy_joules);
  until_counter_moves(sampler, sampling_from, call);  // the window's start needs a move before it
  const auto window_start = Clock::now();
  const std::vector<double> times = timed_calls(cfg.repeats, call);
  const auto window_end = Clock::now();
  until_counter_moves(sampler, window_end, call);
  out.energy_slowdown = timed_median_ms > 0 ? median_of(times) / timed_median_ms : 0.0;
  if (out.energy_slowdown > cfg.energy_slowdown_limit) return;
  out.energy_j = sampler.joules_between(window_start, window_end);
  if (out.energy_j)
    out.energy_window_s = std::chrono::duration<double>(window_end - window_start).count();
}

// The warm-up (warm_up) and then cfg.repeats timed calls, with no energy counter read meanwhile;
// returns their times. With a counter, `out` then gets the energy of a window of its own
// (measure_energy).
template <typename Call>
std::vector<double> warm_up_and_time(const ModelBenchConfig& cfg, Clock::time_point first,
                                     Call&& call, ModelBenchTiming& out) {
  warm_up(cfg, first, call);
  const std::vector<double> times = timed_calls(cfg.repeats, call);
  if (cfg.energy_joules) measure_energy(cfg, median_of(times), call, out);
  return times;
}

double mib(std::int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// Median and the 10th/90th percentiles of the repeat times.
void order_statistics(std::vector<double> t, ModelBenchTiming& out) {
  std::sort(t.begin(), t.end());
  const auto at = [&](double q) {
    return t[static_cast<std::size_t>(std::lround(q * static_cast<double>(t.size() - 1)))];
  };
  out.median_ms = median_of(t);
  out.p10_ms = at(0.1);
  out.p90_ms = at(0.9);
}

std::int64_t preset_batch(const std::string& preset) {
  if (preset == "gpt50m") return 64;
  if (preset == "gpt350m") return 16;
  if (preset == "gpt1.3b") return 8;
  return 8;
}

struct Batch {
  std::vector<std::int32_t> inputs, targets;
};

// Uniform tokens from the seed; targets are the inputs shifted by one (the last one drawn too).
Batch make_batch(std::int64_t m, std::int64_t vocab, std::uint64_t seed) {
  Batch b;
  b.inputs.resize(static_cast<std::size_t>(m));
  b.targets.resize(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i <= m; ++i) {
    const auto t = static_cast<std::int32_t>(random_u32(seed, 77, static_cast<std::uint64_t>(i)) %
                                             static_cast<std::uint32_t>(vocab));
    if (i < m) b.inputs[static_cast<std::size_t>(i)] = t;
    if (i > 0) b.targets[static_cast<std::size_t>(i - 1)] = t;
  }
  return b;
}

// Bytes of training state per model parameter, and of each part.
double per_parameter(std::int64_t bytes, std::int64_t parameters) {
  return parameters > 0 ? static_cast<double>(bytes) / static_cast<double>(parameters) : 0.0;
}

nlohmann::json state_json(const ModelBenchArmResult::StateBytes& s, std::int64_t parameters) {
  return {{"parameters", s.parameters},
          {"gradients", s.gradients},
          {"optimizer", s.optimizer},
          {"per_parameter", per_parameter(s.total(), parameters)}};
}

// One line per arm that ran a train step: what its training state costs per parameter.
std::string state_report(const ModelBenchResult& r) {
  std::string out;
  for (const auto& a : r.arms) {
    if (a.state.total() == 0) continue;
    out += fmt::format(
        "training state, {}: {:.2f} bytes/parameter (parameters {:.2f}, gradients {:.2f}, "
        "optimizer {:.2f})\n",
        a.arm, per_parameter(a.state.total(), r.parameters),
        per_parameter(a.state.parameters, r.parameters),
        per_parameter(a.state.gradients, r.parameters),
        per_parameter(a.state.optimizer, r.parameters));
  }
  return out;
}

// Adds a later round's timing of the same arm: the repeats pooled, the statistics recomputed.
void pool_round(ModelBenchTiming& into, const ModelBenchTiming& round, std::int64_t tokens) {
  if (round.samples_ms.empty()) return;
  into.samples_ms.insert(into.samples_ms.end(), round.samples_ms.begin(), round.samples_ms.end());
  into.round_medians_ms.push_back(round.median_ms);
  order_statistics(into.samples_ms, into);
  into.peak_mib = std::max(into.peak_mib, round.peak_mib);
  // Energy is kept only when every round measured it: it must cover the pooled repeats.
  into.energy_slowdown = std::max(into.energy_slowdown, round.energy_slowdown);
  const bool both = into.energy_j && round.energy_j;
  into.energy_j = both ? std::optional<double>(*into.energy_j + *round.energy_j) : std::nullopt;
  into.energy_window_s = both ? into.energy_window_s + round.energy_window_s : 0.0;
  into.tokens_per_s = static_cast<double>(tokens) / (into.median_ms / 1e3);
}

ModelBenchArmResult run_arm(const ModelBenchConfig& cfg, const ModelConfig& mc,
                            const ModelBenchArm& arm, const Batch& batch, bool op_times) {
  ModelBenchArmResult r;
  r.arm = arm.name;
  const std::int64_t b = cfg.batch, m = b * mc.seq_len;
  const float grad_scale = 1.f / static_cast<float>(m);
  const int chunk = static_cast<int>(cfg.loss_chunk_rows);
  KernelOptions kernels = cfg.kernels;
  if (arm.attention) kernels.attention = *arm.attention;
  r.attention = attention_kernels_name(kernels.attention);
  r.inputs_sha256 = sha256_hex(batch.inputs.data(), batch.inputs.size() * 4);
  r.targets_sha256 = sha256_hex(batch.targets.data(), batch.targets.size() * 4);
  auto weights = [&](GptModel& model) {
    if (cfg.checkpoint.empty()) {
      model.init_parameters(cfg.seed);
    } else {
      std::filesystem::path p = cfg.checkpoint;
      if (std::filesystem::is_directory(p)) p /= "model.safetensors";
      load_weights(p, model);
    }
  };
  if (cfg.frozen) {
    auto backend = make_backend(cfg.backend, kernels);
    GptModel model(mc, arm.precision, b, *backend);
    weights(model);
    r.weights_sha256 = model.parameter_sha256();
    auto pass = [&] {
      model.zero_grads();
      const LossSums s =
          model.forward_backward(batch.inputs.data(), batch.targets.data(), grad_scale, -1, chunk);
      backend->synchronize();
      return s;
    };
    const auto first = Clock::now();
    const LossSums s = pass();
    r.frozen.first_call_ms = ms_since(first);
    r.loss = s.loss_sum / static_cast<double>(std::max<std::int64_t>(s.counted, 1));
    const std::vector<double> times = warm_up_and_time(cfg, first, pass, r.frozen);
    order_statistics(times, r.frozen);
    r.frozen.samples_ms = times;
    r.frozen.round_medians_ms = {r.frozen.median_ms};
    r.frozen.peak_mib = mib(backend->memory_stats().peak_bytes);
    r.frozen.tokens_per_s = static_cast<double>(m) / (r.frozen.median_ms / 1e3);
  }
  if (cfg.train_step) {
    auto backend = make_backend(cfg.backend, kernels);
    GptModel model(mc, arm.precision, b, *backend);
    weights(model);
    if (r.weights_sha256.empty()) r.weights_sha256 = model.parameter_sha256();
    OptimConfig oc;  // the presets' optimizer defaults; the rate is irrelevant to the time
    oc.moments = arm.moments;
    AdamW opt(oc, model);
    const MemoryStats held = backend->memory_stats();
    r.state = {held.current(MemoryKind::parameters), held.current(MemoryKind::gradients),
               held.current(MemoryKind::optimizer)};
    const float clip = 1.0f;
    // The Trainer's step (one process): gradients, one norm reduction, then AdamW with the clip
    // folded in, which also writes the bf16 working weights.
    double step_loss = 0;
    auto step = [&] {
      model.zero_grads();
      const LossSums s =
          model.forward_backward(batch.inputs.data(), batch.targets.data(), grad_scale, -1, chunk);
      step_loss = s.loss_sum / static_cast<double>(std::max<std::int64_t>(s.counted, 1));
      const double norm = std::sqrt(backend->sum_of_squares(model.grads()));
      opt.step(1e-4f, norm > clip ? static_cast<float>(clip / norm) : 1.f);
      if (!opt.writes_working_copy()) model.refresh_working_weights();
      backend->synchronize();
    };
    const auto first = Clock::now();
    step();
    r.step.first_call_ms = ms_since(first);
    r.step_loss_first = step_loss;
    const std::vector<double> times = warm_up_and_time(cfg, first, step, r.step);
    r.step_loss_last = step_loss;
    order_statistics(times, r.step);
    r.step.samples_ms = times;
    r.step.round_medians_ms = {r.step.median_ms};
    r.step.peak_mib = mib(backend->memory_stats().peak_bytes);
    r.step.tokens_per_s = static_cast<double>(m) / (r.step.median_ms / 1e3);
#if defined(FP8LAB_HAVE_CUDA)
    if (auto* cuda = dynamic_cast<cuda::CudaBackend*>(backend.get()); cuda && op_times) {
      cuda->set_op_timing(true);
      const auto timed = Clock::now();
      step();
      r.op_step_wall_ms = ms_since(timed);
      cuda->set_op_timing(false);
      for (const cuda::OpTime& t : cuda->take_op_times())
        r.op_times.push_back({t.name, t.ms, t.host_ms, t.calls});
    }
#endif
  }
  return r;
}

// One line naming the timings whose energy was left unmeasured because reading the counter
// slowed their calls beyond the config's limit; empty when none was.
std::string energy_withheld_line(const ModelBenchResult& r) {
  std::string which;
  for (const auto& a : r.arms) {
    for (const auto& [what, t] : {std::pair{"fwd+bwd", &a.frozen}, std::pair{"step", &a.step}}) {
      if (t->energy_slowdown <= r.config.energy_slowdown_limit) continue;
      char item[160];
      std::snprintf(item, sizeof item, "%s%s %s %.2fx", which.empty() ? "" : ", ", a.arm.c_str(),
                    what, t->energy_slowdown);
      which += item;
    }
  }
  if (which.empty()) return "";
  char limit[64];
  std::snprintf(limit, sizeof limit, "%.2fx", r.config.energy_slowdown_limit);
  return "energy withheld where reading the counter slowed the calls beyond " + std::string(limit) +
         " of their timed median: " + which + " (the times above were taken without it)\n";
}

// The energy table: one row per arm with any energy measured, or one line saying why none was;
// then which timings had their energy withheld, if any.
std::string energy_report(const ModelBenchResult& r) {
  const std::int64_t tokens = r.config.batch * r.model.seq_len;
  const bool any = std::any_of(r.arms.begin(), r.arms.end(), [](const ModelBenchArmResult& a) {
    return a.frozen.energy_j || a.step.energy_j;
  });
  const std::string withheld = energy_withheld_line(r);
  if (!any) {
    if (!withheld.empty()) return withheld;
    return "energy: " +
           (r.energy_source.rfind("not measured", 0) == 0
                ? r.energy_source
                : "not measured: every read of " + r.energy_source + " failed") +
           "\n";
  }
  std::string out = "Energy a repeat, from a window of as many calls after the timed ones (" +
                    r.energy_source +
                    "):\n| arm | fwd+bwd J | fwd+bwd W | step J | step W | step tokens/J | "
                    "tokens/J vs torch |\n|---|---:|---:|---:|---:|---:|---:|\n";
  const auto cell = [](std::optional<double> v, const char* format) {
    if (!v) return std::string("-");
    char buf[32];
    std::snprintf(buf, sizeof buf, format, *v);
    return std::string(buf);
  };
  // Our tokens per joule over the peer's (gpt_peer.py reads the same NVML counter), where both
  // were measured. A peer JSON without energy has null or no "tokens_per_joule".
  const auto vs_peer = [&r](const std::string& arm, std::optional<double> ours) {
    const nlohmann::json* p = peer_arm(r.peer, r.config.preset, arm);
    const double theirs = p ? peer_value(*p, "train", "tokens_per_joule") : 0.0;
    return ours && theirs > 0 ? std::optional<double>(*ours / theirs) : std::nullopt;
  };
  for (const auto& a : r.arms) {
    out += "| " + a.arm + " | " + cell(joules_per_repeat(a.frozen), "%.1f") + " | " +
           cell(mean_watts(a.frozen), "%.0f") + " | " + cell(joules_per_repeat(a.step), "%.1f") +
           " | " + cell(mean_watts(a.step), "%.0f") + " | " +
           cell(tokens_per_joule(a.step, tokens), "%.0f") + " | " +
           cell(vs_peer(a.arm, tokens_per_joule(a.step, tokens)), "%.2fx") + " |\n";
  }
  return out + withheld;
}

}  // namespace

std::optional<double> joules_per_repeat(const ModelBenchTiming& t) {
  if (!t.energy_j || t.samples_ms.empty()) return std::nullopt;
  return *t.energy_j / static_cast<double>(t.samples_ms.size());
}

std::optional<double> mean_watts(const ModelBenchTiming& t) {
  if (!t.energy_j || t.energy_window_s <= 0) return std::nullopt;
  return *t.energy_j / t.energy_window_s;
}

std::optional<double> tokens_per_joule(const ModelBenchTiming& t, std::int64_t tokens) {
  const std::optional<double> j = joules_per_repeat(t);
  if (!j || *j <= 0) return std::nullopt;
  return static_cast<double>(tokens) / *j;
}

ModelBenchArm parse_model_bench_arm(const std::string& name) {
  ModelBenchArm arm;
  arm.name = name;
  std::string policy = name;
  // Strips `suffix` from the end of policy when it is there.
  auto strip = [&policy](const std::string& suffix) {
    if (policy.size() <= suffix.size() ||
        policy.compare(policy.size() - suffix.size(), suffix.size(), suffix) != 0)
      return false;
    policy.resize(policy.size() - suffix.size());
    return true;
  };
  if (strip("+cudnn-forward"))
    arm.attention = AttentionKernels::cudnn_forward;
  else if (strip("+cudnn"))
    arm.attention = AttentionKernels::cudnn;
  if (strip("+bf16-moments")) arm.moments = DType::bf16;
  if (strip("+bf16-grads")) arm.precision.grads = DType::bf16;
  if (strip("+weights-from-master")) arm.precision.fp8_weights_from_master = true;
  if (strip("+recompute-qkv")) arm.precision.qkv_recompute = true;
  if (strip("+recompute-residual")) arm.precision.residual_recompute = true;
  if (strip("+recompute-pointwise")) arm.precision.pointwise_recompute = true;
  if (strip("+recompute")) arm.precision.mlp_recompute = true;
  if (strip("+bf16-wgrad")) arm.precision.fp8.bf16_wgrad = true;
  if (strip("+rowwise")) arm.precision.fp8.recipe = Fp8Recipe::rowwise;
  if (arm.precision.fp8.recipe == Fp8Recipe::tensorwise && strip("+blockwise"))
    arm.precision.fp8.recipe = Fp8Recipe::blockwise;
  // What is left past the policy is an unknown option or one out of its place.
  const std::size_t plus = policy.find('+');
  FP8LAB_CHECK(plus == std::string::npos,
               "bench arm '{}': '{}' is not an option in its place; after the policy (bf16, "
               "fp8-mlp or fp8-linears) come, each optional and in this order: +rowwise or "
               "+blockwise, +bf16-wgrad, +recompute, +recompute-pointwise, +recompute-residual, "
               "+recompute-qkv, +weights-from-master, +bf16-grads, +bf16-moments, +cudnn or "
               "+cudnn-forward",
               name, policy.substr(plus));
  arm.precision.policy = parse_policy(policy);
  FP8LAB_CHECK(arm.precision.policy != PrecisionPolicy::bf16 ||
                   (arm.precision.fp8 == Fp8Options{} && !arm.precision.fp8_weights_from_master),
               "bench arm '{}': a recipe, bf16-wgrad or weights-from-master applies to an FP8 "
               "policy only",
               name);
  return arm;
}

ModelBenchResult run_model_bench(const ModelBenchConfig& config) {
  ModelBenchResult result;
  result.config = config;
  ModelBenchConfig& cfg = result.config;
  if (cfg.batch == 0) cfg.batch = preset_batch(cfg.preset);
  FP8LAB_CHECK(cfg.batch > 0, "--batch {} must be positive", cfg.batch);
  FP8LAB_CHECK(cfg.repeats >= 1 && cfg.warmup >= 0, "--repeats {} / --warmup {} out of range",
               cfg.repeats, cfg.warmup);
  FP8LAB_CHECK(cfg.warmup_s >= 0 && cfg.warmup_s <= 600, "--warmup-s {} out of range [0, 600]",
               cfg.warmup_s);
  FP8LAB_CHECK(cfg.rounds >= 1, "--rounds {} must be at least 1", cfg.rounds);
  FP8LAB_CHECK(cfg.seq_len >= 0, "--seq-len {} must be positive (or 0: the preset's)", cfg.seq_len);
  FP8LAB_CHECK(!cfg.arms.empty(), "bench model: no arms");
  RunConfig run = run_preset(cfg.preset);
  for (const std::string& set : cfg.sets) {
    FP8LAB_CHECK(set.rfind("model.", 0) == 0 || set.rfind("kernels.", 0) == 0,
                 "--set '{}': bench model takes model.* and kernels.* keys only", set);
    apply_override(run, set);
  }
  cfg.kernels = run.kernels;
  result.model = run.model;
  if (cfg.seq_len > 0) result.model.seq_len = cfg.seq_len;
  result.model.validate();
  result.parameters = ParameterLayout(result.model).total();
  if (!cfg.energy) {
    cfg.energy_joules = nullptr;
    result.energy_source = "not measured: --no-energy";
  } else if (cfg.energy_joules) {
    result.energy_source = "the caller's energy counter";
  } else if (cfg.backend != "cuda") {
    result.energy_source = "not measured: the " + cfg.backend + " backend has no energy counter";
  } else {
#if defined(FP8LAB_HAVE_CUDA)
    // No GPU is the backend's error to report (make_backend below), not the counter's.
    int device = 0;
    char bus_id[32] = {};
    cudaError_t rc = cudaGetDevice(&device);
    if (rc == cudaSuccess) rc = cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device);
    if (rc != cudaSuccess) {
      result.energy_source = std::string("not measured: ") + cudaGetErrorString(rc);
      (void)cudaGetLastError();  // clear it for the backend's own checks
    } else {
      // Shared with the reading function, which keeps NVML open for the whole run.
      auto counter = std::make_shared<bench::GpuEnergyCounter>(bus_id);
      if (counter->available()) {
        result.energy_source = counter->describe();
        cfg.energy_joules = [counter] { return counter->joules(); };
      } else {
        result.energy_source = "not measured: " + counter->why_not();
      }
    }
#else
    result.energy_source = "not measured: built without CUDA";
#endif
  }
  const Batch batch =
      make_batch(cfg.batch * result.model.seq_len, result.model.vocab_size, cfg.seed);
  const std::int64_t tokens = cfg.batch * result.model.seq_len;
  for (int round = 0; round < cfg.rounds; ++round) {
    for (std::size_t i = 0; i < cfg.arms.size(); ++i) {
      const ModelBenchArm& arm = cfg.arms[i];
      std::fprintf(stderr, "bench model: %s B%lld x T%lld, arm %s, round %d of %d ...\n",
                   cfg.preset.c_str(), static_cast<long long>(cfg.batch),
                   static_cast<long long>(result.model.seq_len), arm.name.c_str(), round + 1,
                   cfg.rounds);
      // Op times and GEMM picks come from the first round (one extra step each).
      ModelBenchArmResult r = run_arm(cfg, result.model, arm, batch, cfg.op_times && round == 0);
      if (round == 0) {
        result.arms.push_back(std::move(r));
        continue;
      }
      ModelBenchArmResult& first = result.arms[i];
      FP8LAB_CHECK(r.weights_sha256 == first.weights_sha256,
                   "arm {} started from other weights in round {}", arm.name, round + 1);
      pool_round(first.frozen, r.frozen, tokens);
      pool_round(first.step, r.step, tokens);
    }
  }
  for (const auto& a : result.arms) {
    FP8LAB_CHECK(a.weights_sha256 == result.arms.front().weights_sha256,
                 "arm {} started from other weights than arm {}", a.arm, result.arms.front().arm);
  }
  return result;
}

std::string model_bench_report(const ModelBenchResult& r) {
  std::string out;
  char line[512];
  const auto& c = r.config;
  std::string repeats = std::to_string(c.repeats) + " repeats (median)";
  if (c.rounds > 1) {
    repeats = std::to_string(c.rounds) + " rounds of " + std::to_string(c.repeats) +
              " repeats, arms interleaved (median of all " + std::to_string(c.rounds * c.repeats) +
              ")";
  }
  std::snprintf(line, sizeof line,
                "fp8lab bench model: %s (%lld parameters), B%lld x T%lld = %lld tokens, backend "
                "%s, %s\n",
                c.preset.c_str(), static_cast<long long>(r.parameters),
                static_cast<long long>(c.batch), static_cast<long long>(r.model.seq_len),
                static_cast<long long>(c.batch * r.model.seq_len), c.backend.c_str(),
                repeats.c_str());
  out += line;
  out += std::string("kernels: attention ") + attention_kernels_name(c.kernels.attention) + "\n";
  if (!r.arms.empty()) {
    std::snprintf(line, sizeof line, "weights sha256 %.16s…  inputs %.16s…  targets %.16s…\n",
                  r.arms[0].weights_sha256.c_str(), r.arms[0].inputs_sha256.c_str(),
                  r.arms[0].targets_sha256.c_str());
    out += line;
  }
  out +=
      "| arm | fwd+bwd ms | fwd+bwd peak MiB | first call ms | step ms | tokens/s | step peak MiB "
      "| step vs torch (tok/s) | peak vs torch |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& a : r.arms) {
    std::string vs_speed = "-", vs_peak = "-";
    if (const nlohmann::json* p = peer_arm(r.peer, c.preset, a.arm)) {
      const double peer_tps = peer_value(*p, "train", "tokens_per_s");
      const double peer_peak = peer_value(*p, "train", "peak_mib");
      if (peer_tps > 0 && a.step.tokens_per_s > 0) {
        std::snprintf(line, sizeof line, "%.2fx", a.step.tokens_per_s / peer_tps);
        vs_speed = line;
      }
      if (peer_peak > 0 && a.step.peak_mib > 0) {
        std::snprintf(line, sizeof line, "%.2fx", a.step.peak_mib / peer_peak);
        vs_peak = line;
      }
    }
    std::snprintf(line, sizeof line, "| %s | %.2f | %.0f | %.0f | %.2f | %.0f | %.0f | %s | %s |\n",
                  a.arm.c_str(), a.frozen.median_ms, a.frozen.peak_mib, a.frozen.first_call_ms,
                  a.step.median_ms, a.step.tokens_per_s, a.step.peak_mib, vs_speed.c_str(),
                  vs_peak.c_str());
    out += line;
  }
  for (const auto& a : r.arms) {
    if (c.train_step && !std::isfinite(a.step_loss_last)) {
      std::snprintf(line, sizeof line,
                    "warning: arm %s's training-step loss is %g after its timed repeats (%g at "
                    "the first call): its step times time a diverged model\n",
                    a.arm.c_str(), a.step_loss_last, a.step_loss_first);
      out += line;
    }
  }
  out += state_report(r);
  out += energy_report(r);
  if (c.rounds > 1) {  // how far the rounds drift apart, arm by arm
    std::string head = "| arm |", rule = "|---|";
    for (int i = 1; i <= c.rounds; ++i) {
      head += " round " + std::to_string(i) + " |";
      rule += "---:|";
    }
    out += std::string(c.train_step ? "Step" : "Frozen fwd+bwd") +
           " medians by round (in run order):\n" + head + "\n" + rule + "\n";
    for (const auto& a : r.arms) {
      out += "| " + a.arm + " |";
      for (double ms : (c.train_step ? a.step : a.frozen).round_medians_ms) {
        std::snprintf(line, sizeof line, " %.2f |", ms);
        out += line;
      }
      out += "\n";
    }
  }
  if (const std::vector<ModelBenchTargetCheck> goals = model_bench_targets(r); !goals.empty()) {
    out +=
        "Targets (the project's goals; step medians and peaks of this run):\n"
        "| target | measured | limit | met | from |\n|---|---:|---:|---|---|\n";
    for (const auto& g : goals) {
      std::snprintf(line, sizeof line, "| %s | %.3f | %s %.2f | %s | %s |\n", g.target.c_str(),
                    g.value, g.relation.c_str(), g.limit, g.met ? "yes" : "no", g.detail.c_str());
      out += line;
    }
  }
  for (const auto& a : r.arms) {
    if (a.op_times.empty()) continue;
    double total = 0, host = 0;  // "op: part" entries time pieces of an op already counted
    for (const auto& t : a.op_times) {
      if (t.op.find(':') != std::string::npos) continue;
      total += t.ms;
      host += t.host_ms;
    }
    // GPU time shows what the kernels cost; host time inside the ops beside the step's wall
    // time shows a step the host holds back (launch overhead, a wait inside an op's call).
    std::snprintf(line, sizeof line,
                  "GPU time per op, one training step of %s (op timing on; %.1f ms in ops on the "
                  "GPU, %.1f ms on the host inside them, %.1f ms wall):\n"
                  "| op | calls | ms | share | host ms |\n|---|---:|---:|---:|---:|\n",
                  a.arm.c_str(), total, host, a.op_step_wall_ms);
    out += line;
    auto sorted = a.op_times;
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& x, const auto& y) { return x.ms > y.ms; });
    for (const auto& t : sorted) {
      std::snprintf(line, sizeof line, "| %s | %d | %.2f | %.1f%% | %.2f |\n", t.op.c_str(),
                    t.calls, t.ms, 100.0 * t.ms / total, t.host_ms);
      out += line;
    }
  }
  if (!r.peer.is_null()) {
    out +=
        "PyTorch peer (same run):\n| arm | fwd+bwd ms | fwd+bwd peak MiB | step ms | tokens/s | "
        "step peak MiB |\n|---|---:|---:|---:|---:|---:|\n";
    for (const auto& a : r.arms) {
      if (const nlohmann::json* p = peer_arm(r.peer, c.preset, a.arm)) {
        std::snprintf(line, sizeof line, "| %s | %.2f | %.0f | %.2f | %.0f | %.0f |\n",
                      a.arm.c_str(), peer_value(*p, "frozen", "median_ms"),
                      peer_value(*p, "frozen", "peak_mib"), peer_value(*p, "train", "median_ms"),
                      peer_value(*p, "train", "tokens_per_s"), peer_value(*p, "train", "peak_mib"));
        out += line;
      }
    }
  }
  return out;
}

nlohmann::json model_bench_json(const ModelBenchResult& r) {
  nlohmann::json arms = nlohmann::json::array();
  const std::int64_t tokens = r.config.batch * r.model.seq_len;
  const auto maybe = [](std::optional<double> v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  auto timing = [&](const ModelBenchTiming& t) {
    const nlohmann::json window_s = t.energy_j ? nlohmann::json(t.energy_window_s) : nullptr;
    return nlohmann::json{
        {"median_ms", t.median_ms},
        {"energy_j", maybe(t.energy_j)},
        {"energy_window_s", window_s},
        {"energy_slowdown",
         t.energy_slowdown > 0 ? nlohmann::json(t.energy_slowdown) : nlohmann::json(nullptr)},
        {"joules_per_repeat", maybe(joules_per_repeat(t))},
        {"mean_watts", maybe(mean_watts(t))},
        {"tokens_per_joule", maybe(tokens_per_joule(t, tokens))},
        {"p10_ms", t.p10_ms},
        {"p90_ms", t.p90_ms},
        {"first_call_ms", t.first_call_ms},
        {"peak_mib", t.peak_mib},
        {"tokens_per_s", t.tokens_per_s},
        {"round_medians_ms", t.round_medians_ms},
        {"samples_ms", t.samples_ms}};
  };
  for (const auto& a : r.arms) {
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& t : a.op_times)
      ops.push_back({{"op", t.op}, {"ms", t.ms}, {"host_ms", t.host_ms}, {"calls", t.calls}});
    arms.push_back({{"arm", a.arm},
                    {"op_times", ops},
                    {"op_step_wall_ms", a.op_step_wall_ms},
                    {"frozen", timing(a.frozen)},
                    {"step", timing(a.step)},
                    {"loss", a.loss},
                    {"step_loss_first", a.step_loss_first},
                    {"step_loss_last", a.step_loss_last},
                    {"state_bytes", state_json(a.state, r.parameters)},
                    {"attention", a.attention},
                    {"weights_sha256", a.weights_sha256},
                    {"inputs_sha256", a.inputs_sha256},
                    {"targets_sha256", a.targets_sha256}});
  }
  nlohmann::json targets = nlohmann::json::array();
  for (const auto& g : model_bench_targets(r))
    targets.push_back({{"target", g.target},
                       {"value", g.value},
                       {"relation", g.relation},
                       {"limit", g.limit},
                       {"met", g.met},
                       {"detail", g.detail}});
  const auto& c = r.config;
  return {{"benchmark", "fp8lab bench model"},
          {"commit", c.commit},
          {"backend", c.backend},
          {"preset", c.preset},
          {"batch", c.batch},
          {"seq_len", r.model.seq_len},
          {"model", to_json(r.model)},
          {"parameters", r.parameters},
          {"warmup", c.warmup},
          {"warmup_s", c.warmup_s},
          {"repeats", c.repeats},
          {"rounds", c.rounds},
          {"loss_chunk_rows", c.loss_chunk_rows},
          {"seed", c.seed},
          {"checkpoint", c.checkpoint},
          {"kernels", {{"attention", attention_kernels_name(c.kernels.attention)}}},
          {"energy_source", r.energy_source},
          {"energy_slowdown_limit", c.energy_slowdown_limit},
          {"arms", arms},
          {"targets", targets},
          {"peer", r.peer}};
}

}  // namespace fp8lab
