// `fp8lab bench model`'s energy per repeat: a counter sampled through a window of as many calls
// after each arm's timed repeats (bench/energy_sampler.hpp, tested in test_energy_sampler.cpp;
// never beside the timed repeats themselves) gives joules per repeat, mean
// watts over the timed window and tokens per joule, pooled over rounds only when every round
// measured it; without a counter the report says why. The GPU's own counter (NVML) is tested in
// tests/cuda/test_cuda_energy.cpp; here a counter of known power stands in for it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "bench/energy_counter.hpp"
#include "fp8lab/bench_model.hpp"
#include "model/bench_model_fixtures.hpp"

namespace fp8lab {
namespace {

using testing::tiny_cpu_bench;

// The tiny CPU model's calls vary by more than the 5% a GPU's energy window may differ from its
// timed repeats, so the tests of the energy's plumbing lift the limit; one test sets it to 0.
constexpr double kNoLimit = 1e9;

// A counter of a device drawing exactly `watts`: joules = watts × seconds since construction.
struct ConstantPower {
  double watts;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::optional<double> operator()() const {
    return watts * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

TEST(BenchModelEnergy, ACounterGivesJoulesWattsAndTokensPerJoule) {
  ModelBenchConfig c = tiny_cpu_bench({"bf16", "fp8-mlp"});
  c.repeats = 3;
  c.rounds = 2;
  c.train_step = true;
  c.energy_joules = ConstantPower{250.0};
  c.energy_slowdown_limit = kNoLimit;
  const ModelBenchResult r = run_model_bench(c);
  EXPECT_EQ(r.energy_source, "the caller's energy counter");
  const std::int64_t tokens = c.batch * 32;
  for (const ModelBenchArmResult& a : r.arms) {
    for (const ModelBenchTiming* t : {&a.frozen, &a.step}) {
      ASSERT_TRUE(t->energy_j.has_value()) << a.arm;
      ASSERT_EQ(t->samples_ms.size(), 6u);
      EXPECT_GT(t->energy_slowdown, 0.0) << a.arm;  // the energy windows ran and were timed
      EXPECT_DOUBLE_EQ(*joules_per_repeat(*t), *t->energy_j / 6.0) << a.arm;
      // The energy windows' wall time, both rounds' (their calls are not the timed ones, so
      // their length is not bound by the timed repeats').
      EXPECT_GT(t->energy_window_s, 0.0) << a.arm;
      // The counter read at the windows' ends: 250 W, up to where the sampler stamps a read (at
      // its middle; a read of this counter takes well under a microsecond, a window
      // milliseconds).
      EXPECT_NEAR(*mean_watts(*t), 250.0, 2.5) << a.arm;
      EXPECT_DOUBLE_EQ(*mean_watts(*t), *t->energy_j / t->energy_window_s) << a.arm;
      EXPECT_DOUBLE_EQ(*tokens_per_joule(*t, tokens), double(tokens) / *joules_per_repeat(*t));
    }
  }
  const std::string report = model_bench_report(r);
  EXPECT_NE(report.find("Energy a repeat, from a window of as many calls after the timed ones "
                        "(the caller's energy counter):\n"
                        "| arm | fwd+bwd J | fwd+bwd W | step J | step W | step tokens/J | "
                        "tokens/J vs torch |"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("| fp8-mlp | "), std::string::npos);
  // The peer's tokens per joule (gpt_peer.py's JSON) gives the ratio column; a peer arm
  // without energy (null) leaves it empty.
  ModelBenchResult with_peer = r;
  const double ours = *tokens_per_joule(r.arms[0].step, tokens);
  with_peer.peer = {{"preset", "tiny"},
                    {"arms",
                     {{"bf16", {{"train", {{"tokens_per_joule", ours / 1.25}}}}},
                      {"fp8-mlp", {{"train", {{"tokens_per_joule", nullptr}}}}}}}};
  const std::string vs = model_bench_report(with_peer);
  EXPECT_NE(vs.find(" | 1.25x |\n| fp8-mlp | "), std::string::npos) << vs;
  EXPECT_NE(vs.find(" | - |\n"), std::string::npos) << vs;
  const nlohmann::json j = model_bench_json(r);
  EXPECT_EQ(j["energy_source"], "the caller's energy counter");
  EXPECT_NEAR(j["arms"][1]["step"]["mean_watts"].get<double>(), *mean_watts(r.arms[1].step), 1e-9);
  EXPECT_NEAR(j["arms"][1]["step"]["energy_window_s"].get<double>(), r.arms[1].step.energy_window_s,
              1e-12);
  EXPECT_TRUE(j["arms"][0]["frozen"]["tokens_per_joule"].is_number());
}

// A round whose reads fail leaves the pooled energy unmeasured: the joules would not cover the
// repeats they are divided by.
TEST(BenchModelEnergy, AFailedReadLeavesTheArmUnmeasured) {
  ModelBenchConfig c = tiny_cpu_bench({"bf16"});
  c.rounds = 2;
  // Each phase's sampler polls on a thread of its own: the first thread to read gets a counter
  // of 250 W, every later one (round 2's) a failed read.
  std::atomic<int> threads{0};
  const ConstantPower power{250.0};
  c.energy_joules = [&threads, power]() -> std::optional<double> {
    thread_local int which = 0;  // this thread's turn, from 1
    if (which == 0) which = ++threads;
    if (which > 1) return std::nullopt;
    return power();
  };
  c.energy_slowdown_limit = kNoLimit;
  const ModelBenchResult r = run_model_bench(c);
  EXPECT_EQ(threads.load(), 2);
  EXPECT_FALSE(r.arms[0].frozen.energy_j.has_value());
  EXPECT_EQ(r.arms[0].frozen.energy_window_s, 0.0);
  EXPECT_FALSE(joules_per_repeat(r.arms[0].frozen).has_value());
  EXPECT_FALSE(mean_watts(r.arms[0].frozen).has_value());
  EXPECT_NE(model_bench_report(r).find(
                "energy: not measured: every read of the caller's energy counter failed\n"),
            std::string::npos)
      << model_bench_report(r);
  const nlohmann::json j = model_bench_json(r);
  EXPECT_TRUE(j["arms"][0]["frozen"]["energy_j"].is_null());
  EXPECT_TRUE(j["arms"][0]["frozen"]["energy_window_s"].is_null());

  // One round, on the first thread: 250 W over its energy window (one call).
  threads = 0;
  c.rounds = 1;
  const ModelBenchResult one = run_model_bench(c);
  const ModelBenchTiming& t = one.arms[0].frozen;
  ASSERT_TRUE(t.energy_j.has_value());
  EXPECT_GT(t.energy_window_s, 0.0);
  EXPECT_NEAR(*t.energy_j, 250.0 * t.energy_window_s, 0.01 * 250.0 * t.energy_window_s);
}

// A counter that never moves leaves every window unbracketed: the bench runs its capped extra
// repeats and reports the energy as unmeasured rather than as zero.
TEST(BenchModelEnergy, ACounterThatNeverMovesIsUnmeasured) {
  ModelBenchConfig c = tiny_cpu_bench({"bf16"});
  c.energy_joules = [] { return std::optional<double>(1000.0); };
  const ModelBenchResult r = run_model_bench(c);
  EXPECT_FALSE(r.arms[0].frozen.energy_j.has_value());
  EXPECT_FALSE(mean_watts(r.arms[0].frozen).has_value());
}

// The timed repeats never run beside the counter's reads: the energy comes from a window of as
// many calls after them, kept only where those calls were within energy_slowdown_limit of the
// timed median. With a limit of 0 every window is over it: the energy is withheld, the report
// says where and by how much, and the times stand.
TEST(BenchModelEnergy, AWindowSlowedByTheReadsIsWithheld) {
  ModelBenchConfig c = tiny_cpu_bench({"bf16", "fp8-mlp"});
  c.rounds = 2;
  c.train_step = true;
  c.energy_joules = ConstantPower{250.0};
  c.energy_slowdown_limit = 0.0;
  const ModelBenchResult r = run_model_bench(c);
  for (const ModelBenchArmResult& a : r.arms) {
    for (const ModelBenchTiming* t : {&a.frozen, &a.step}) {
      EXPECT_FALSE(t->energy_j.has_value()) << a.arm;
      EXPECT_EQ(t->energy_window_s, 0.0) << a.arm;
      EXPECT_GT(t->energy_slowdown, 0.0) << a.arm;
      EXPECT_GT(t->median_ms, 0.0) << a.arm;
      EXPECT_EQ(t->samples_ms.size(), 2u * static_cast<std::size_t>(c.repeats)) << a.arm;
    }
  }
  const std::string report = model_bench_report(r);
  char step[32];
  std::snprintf(step, sizeof step, "bf16 step %.2fx", r.arms[0].step.energy_slowdown);
  EXPECT_NE(report.find("energy withheld where reading the counter slowed the calls beyond 0.00x "
                        "of their timed median: bf16 fwd+bwd "),
            std::string::npos)
      << report;
  EXPECT_NE(report.find(step), std::string::npos) << report;
  EXPECT_EQ(report.find("Energy a repeat"), std::string::npos) << "no energy table without energy";
  const nlohmann::json j = model_bench_json(r);
  EXPECT_EQ(j["energy_slowdown_limit"], 0.0);
  EXPECT_NEAR(j["arms"][1]["step"]["energy_slowdown"].get<double>(), r.arms[1].step.energy_slowdown,
              1e-12);
  EXPECT_TRUE(j["arms"][1]["step"]["energy_j"].is_null());

  // Without a counter no window runs: no slowdown to report.
  const ModelBenchResult none = run_model_bench(tiny_cpu_bench({"bf16"}));
  EXPECT_EQ(none.arms[0].frozen.energy_slowdown, 0.0);
  EXPECT_TRUE(model_bench_json(none)["arms"][0]["frozen"]["energy_slowdown"].is_null());
}

TEST(BenchModelEnergy, WithoutACounterTheReportSaysWhy) {
  const ModelBenchResult r = run_model_bench(tiny_cpu_bench({"bf16"}));
  EXPECT_EQ(r.energy_source, "not measured: the cpu backend has no energy counter");
  EXPECT_NE(
      model_bench_report(r).find("energy: not measured: the cpu backend has no energy counter\n"),
      std::string::npos);
  EXPECT_TRUE(model_bench_json(r)["arms"][0]["frozen"]["mean_watts"].is_null());
}

// --no-energy: even a given counter is not read (no sampling thread, no extra repeats), and
// the report says that this was asked for.
TEST(BenchModelEnergy, NoEnergyReadsNoCounter) {
  ModelBenchConfig c = tiny_cpu_bench({"bf16"});
  std::atomic<int> reads{0};
  c.energy_joules = [&reads] {
    ++reads;
    return std::optional<double>(1000.0 + reads.load());
  };
  c.energy = false;
  const ModelBenchResult r = run_model_bench(c);
  EXPECT_EQ(reads.load(), 0);
  EXPECT_EQ(r.energy_source, "not measured: --no-energy");
  EXPECT_FALSE(r.arms[0].frozen.energy_j.has_value());
  EXPECT_NE(model_bench_report(r).find("energy: not measured: --no-energy\n"), std::string::npos);
}

TEST(GpuEnergyCounter, AMissingLibraryIsUnavailableAndSaysWhy) {
  const bench::GpuEnergyCounter counter("0000:3B:00.0", "libfp8lab-no-such-nvml.so.1");
  EXPECT_FALSE(counter.available());
  EXPECT_NE(counter.why_not().find("cannot load NVML:\n  libfp8lab-no-such-nvml.so.1: "),
            std::string::npos)
      << counter.why_not();
  EXPECT_FALSE(counter.joules().has_value());
  EXPECT_EQ(counter.describe(), "NVML total energy of GPU 0000:3B:00.0");
}

}  // namespace
}  // namespace fp8lab
