// The energy sampler of `fp8lab bench model` (src/bench/energy_sampler.hpp): the interpolation
// between the counter's moves, exactly, and the polling thread against a fake counter that moves
// in steps like NVML's does on the H200 (every ~100 ms there; every 20 ms here, to stay short).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/energy_sampler.hpp"

namespace fp8lab::bench {
namespace {

using std::chrono::milliseconds;

// A counter moving every 100 ms by 25 J (250 W), as sampled from `base` on.
std::vector<EnergySample> steps_at_250_watts(EnergyClock::time_point base, int moves) {
  std::vector<EnergySample> s;
  for (int k = 0; k < moves; ++k) s.push_back({base + milliseconds(100 * k), 25.0 * k});
  return s;
}

TEST(EnergySampler, InterpolatesWindowsThatStartAndEndMidStep) {
  const auto base = EnergyClock::now();
  const std::vector<EnergySample> s = steps_at_250_watts(base, 6);
  // 130 ms .. 470 ms: 340 ms at 250 W, though the counter moved only at 200, 300 and 400 ms.
  std::string why = "unset";
  const std::optional<double> j =
      energy_between(s, base + milliseconds(130), base + milliseconds(470), &why);
  ASSERT_TRUE(j.has_value()) << why;
  EXPECT_NEAR(*j, 85.0, 1e-9);
  EXPECT_EQ(why, "unset");  // only written on failure
  // Within one step: 20 ms of it.
  EXPECT_NEAR(*energy_between(s, base + milliseconds(110), base + milliseconds(130)), 5.0, 1e-9);
}

// Where the power changes at a move, each end is interpolated in its own step's power.
TEST(EnergySampler, EachEndTakesThePowerOfItsOwnStep) {
  const auto base = EnergyClock::now();
  // 250 W up to 200 ms, then 500 W: 50 J in the step from 200 to 300 ms.
  const std::vector<EnergySample> s = {{base, 0.0},
                                       {base + milliseconds(100), 25.0},
                                       {base + milliseconds(200), 50.0},
                                       {base + milliseconds(300), 100.0}};
  // 150..250 ms: 50 ms at 250 W + 50 ms at 500 W.
  EXPECT_NEAR(*energy_between(s, base + milliseconds(150), base + milliseconds(250)), 37.5, 1e-9);
}

TEST(EnergySampler, ASampleExactlyAtAnEndIsTakenAsIs) {
  const auto base = EnergyClock::now();
  const std::vector<EnergySample> s = steps_at_250_watts(base, 4);  // moves at 0 .. 300 ms
  EXPECT_NEAR(*energy_between(s, base + milliseconds(100), base + milliseconds(200)), 25.0, 1e-9);
  // The first and the last sample bracket a window that is exactly theirs.
  EXPECT_NEAR(*energy_between(s, base, base + milliseconds(300)), 75.0, 1e-9);
  EXPECT_NEAR(*energy_between(s, base, base + milliseconds(150)), 37.5, 1e-9);
}

TEST(EnergySampler, AnUnbracketedWindowIsNotMeasuredAndSaysWhy) {
  const auto base = EnergyClock::now();
  const std::vector<EnergySample> s = steps_at_250_watts(base, 4);  // moves at 0 .. 300 ms
  std::string why;
  EXPECT_FALSE(energy_between(s, base + milliseconds(250), base + milliseconds(301), &why));
  EXPECT_EQ(why, "the counter was not seen to move after the window");
  EXPECT_FALSE(energy_between(s, base - milliseconds(1), base + milliseconds(100), &why));
  EXPECT_EQ(why, "the counter was not seen to move before the window");
  EXPECT_FALSE(energy_between({}, base, base + milliseconds(100), &why));
  EXPECT_EQ(why, "the counter was not seen to move");
  EXPECT_FALSE(energy_between(s, base + milliseconds(200), base + milliseconds(200), &why));
  EXPECT_EQ(why, "the window ends before it starts");
  EXPECT_FALSE(energy_between(s, base + milliseconds(200), base + milliseconds(100)));
}

// A counter that moves every 20 ms by 5 J (250 W), from its construction on.
struct SteppingCounter {
  EnergyClock::time_point start = EnergyClock::now();
  static constexpr double kWatts = 250.0;
  static constexpr auto kStep = milliseconds(20);
  std::optional<double> operator()() const {
    const auto steps = (EnergyClock::now() - start) / kStep;
    return kWatts * std::chrono::duration<double>(kStep).count() * static_cast<double>(steps);
  }
  // When the counter moved to `joules`.
  EnergyClock::time_point moved_at(double joules) const {
    const auto steps =
        std::lround(joules / (kWatts * std::chrono::duration<double>(kStep).count()));
    return start + kStep * steps;
  }
};

// Waits (up to `limit`) until `done`; whether it came.
template <typename Done>
bool wait_for(Done&& done, milliseconds limit) {
  const auto until = EnergyClock::now() + limit;
  while (!done()) {
    if (EnergyClock::now() > until) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

TEST(EnergySampler, ThePollingThreadMeasuresASteppingCounter) {
  const SteppingCounter counter;
  EnergySampler sampler(counter);
  const auto began = EnergyClock::now();
  ASSERT_TRUE(wait_for([&] { return sampler.has_change_after(began); }, milliseconds(500)));
  const auto t0 = EnergyClock::now();
  std::this_thread::sleep_for(milliseconds(200));
  const auto t1 = EnergyClock::now();
  EXPECT_FALSE(sampler.read_failed());
  ASSERT_TRUE(wait_for([&] { return sampler.has_change_after(t1); }, milliseconds(500)));
  const std::optional<double> j = sampler.joules_between(t0, t1);
  ASSERT_TRUE(j.has_value());
  const double expected = SteppingCounter::kWatts * std::chrono::duration<double>(t1 - t0).count();
  // Each move is stamped late by the time to the read that saw it (a 1 ms poll; more when the
  // machine is loaded; a read preempted midway can even stamp it a little early). Points shifted
  // in time by lags within [lo, hi] keep the interpolated counter within 250 W x (hi - lo) of
  // the true counter's difference, so the energy is that close to the window's.
  double lo = 0, hi = 0;
  for (const EnergySample& s : sampler.samples()) {
    const double lag = std::chrono::duration<double>(s.at - counter.moved_at(s.joules)).count();
    lo = std::min(lo, lag);
    hi = std::max(hi, lag);
  }
  EXPECT_NEAR(*j, expected, SteppingCounter::kWatts * (hi - lo) + 1e-9);
  // And that lag is small: 10% of 200 ms at 250 W is a lag of 20 ms, many 1 ms polls even on a
  // busy 2-core machine (a few ms typical there: ~2%).
  EXPECT_NEAR(*j, expected, 0.1 * expected) << "lags " << lo * 1e3 << " .. " << hi * 1e3 << " ms";
}

TEST(EnergySampler, AFailedReadStopsThePolling) {
  int reads = 0;  // read only by the sampler's thread until it has stopped
  EnergySampler sampler([&reads]() -> std::optional<double> {
    ++reads;
    return reads <= 3 ? std::optional<double>(10.0 * reads) : std::nullopt;
  });
  ASSERT_TRUE(wait_for([&] { return sampler.read_failed(); }, milliseconds(500)));
  const std::vector<EnergySample> s = sampler.samples();
  ASSERT_EQ(s.size(), 2u);  // the first read is the baseline; reads 2 and 3 moved
  EXPECT_EQ(s[0].joules, 20.0);
  EXPECT_EQ(s[1].joules, 30.0);
  EXPECT_FALSE(sampler.has_change_after(s[1].at));
  EXPECT_EQ(reads, 4);  // none after the failed one
  std::string why;
  EXPECT_FALSE(sampler.joules_between(s[0].at, s[1].at + milliseconds(1), &why));
  EXPECT_EQ(why, "the counter was not seen to move after the window");
  EXPECT_NEAR(*sampler.joules_between(s[0].at, s[1].at), 10.0, 1e-9);
}

TEST(EnergySampler, AnUnchangingCounterGivesNoSamples) {
  EnergySampler sampler([] { return std::optional<double>(42.0); });
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_TRUE(sampler.samples().empty());
  EXPECT_FALSE(sampler.has_change_after(EnergyClock::time_point::min()));
  EXPECT_FALSE(sampler.read_failed());
}

}  // namespace
}  // namespace fp8lab::bench
