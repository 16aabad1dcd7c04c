// The energy of a window of time from a cumulative energy counter that moves in coarse steps.
//
// Why: on the H200, NVML's total-energy counter (bench/energy_counter.hpp) moves only every
// ~100 ms (77-123 ms apart), and one read takes ~4 ms (bench/probes/nvml_energy_tick.py).
// Two reads around an arm's ~1 s of timed repeats were off by up to one step at
// each end, ~±9%: the first GPU run reported 750 W mean for an arm on a board capped at 700 W.
// So a thread polls the counter and records each moment it moves, and the energy of the window
// is the counter interpolated linearly at each end between the moves that bracket it.
//
// The assumption: constant power within the counter step that holds each end of the window.
// It holds when the GPU does the same work on both sides of each end, which is why
// `fp8lab bench model` warms up before its window and keeps running the same call after it until
// the counter has moved (src/bench/model_bench.cpp). The same is done in Python by
// bench/peers/nvml_energy.py for the PyTorch peer.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace fp8lab::bench {

using EnergyClock = std::chrono::steady_clock;

// One moment the counter was seen to move: when, and the value it moved to.
struct EnergySample {
  EnergyClock::time_point at;
  double joules = 0;
};

// The energy between t0 and t1 (t0 < t1) from `samples` (in time order): the counter
// interpolated linearly between the samples that bracket t0 and those that bracket t1, a sample
// exactly at either end taken as is. nullopt when the window is empty, when no sample is at or
// before t0, or none at or after t1; `why_not` (when given) then says which.
std::optional<double> energy_between(const std::vector<EnergySample>& samples,
                                     EnergyClock::time_point t0, EnergyClock::time_point t1,
                                     std::string* why_not = nullptr);

// Polls a counter on a thread of its own from construction to destruction and records a sample
// each time its value differs from the previous read (the first read only sets the baseline).
// A sample is stamped at the middle of the read that saw the move, so it lags the move by up to
// one read (~4 ms on the H200): alike at both ends of a window, where the lag cancels.
// A read that fails (nullopt, or a throw) ends the polling; the samples before it stay usable.
class EnergySampler {
 public:
  using Read = std::function<std::optional<double>()>;

  explicit EnergySampler(Read read);
  ~EnergySampler();  // stops the polling and joins the thread
  EnergySampler(const EnergySampler&) = delete;
  EnergySampler& operator=(const EnergySampler&) = delete;

  // Whether the counter has been seen to move after `t` (so `t` can end a window).
  bool has_change_after(EnergyClock::time_point t) const;
  // energy_between over the samples so far.
  std::optional<double> joules_between(EnergyClock::time_point t0, EnergyClock::time_point t1,
                                       std::string* why_not = nullptr) const;
  // Whether a read has failed, which stopped the polling: no later move will be seen.
  bool read_failed() const;
  std::vector<EnergySample> samples() const;  // a copy

 private:
  void poll();

  Read read_;
  mutable std::mutex mutex_;  // guards samples_ and read_failed_
  std::vector<EnergySample> samples_;
  bool read_failed_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: it starts once the members above exist
};

}  // namespace fp8lab::bench
