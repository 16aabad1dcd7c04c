// The energy counter's sampler and its interpolation (see energy_sampler.hpp).
#include "bench/energy_sampler.hpp"

#include <algorithm>
#include <utility>

namespace fp8lab::bench {
namespace {

// Reads closer together than this gain nothing against a counter that moves every ~100 ms; a
// fast read (a test's fake counter) sleeps the rest of it instead of spinning a core.
constexpr auto kMinReadInterval = std::chrono::milliseconds(1);

double seconds(EnergyClock::duration d) { return std::chrono::duration<double>(d).count(); }

// The counter at t, interpolated; samples bracket t (front().at <= t <= back().at).
double counter_at(const std::vector<EnergySample>& samples, EnergyClock::time_point t) {
  const auto after = std::lower_bound(
      samples.begin(), samples.end(), t,
      [](const EnergySample& s, EnergyClock::time_point when) { return s.at < when; });
  if (after->at == t) return after->joules;
  const EnergySample& before = *(after - 1);  // exists: front().at <= t < after->at
  return before.joules +
         (after->joules - before.joules) * seconds(t - before.at) / seconds(after->at - before.at);
}

}  // namespace

std::optional<double> energy_between(const std::vector<EnergySample>& samples,
                                     EnergyClock::time_point t0, EnergyClock::time_point t1,
                                     std::string* why_not) {
  const char* why = nullptr;
  if (t1 <= t0) {
    why = "the window ends before it starts";
  } else if (samples.empty()) {
    why = "the counter was not seen to move";
  } else if (samples.front().at > t0) {
    why = "the counter was not seen to move before the window";
  } else if (samples.back().at < t1) {
    why = "the counter was not seen to move after the window";
  }
  if (why != nullptr) {
    if (why_not != nullptr) *why_not = why;
    return std::nullopt;
  }
  return counter_at(samples, t1) - counter_at(samples, t0);
}

EnergySampler::EnergySampler(Read read) : read_(std::move(read)), thread_([this] { poll(); }) {}

EnergySampler::~EnergySampler() {
  stop_ = true;
  thread_.join();
}

void EnergySampler::poll() {
  std::optional<double> last;
  while (!stop_) {
    const auto before = EnergyClock::now();
    std::optional<double> joules;
    try {  // a throw would end the program from this thread: it counts as a failed read
      joules = read_();
    } catch (...) {
    }
    const auto after = EnergyClock::now();
    if (!joules) {
      const std::lock_guard lock(mutex_);
      read_failed_ = true;
      return;
    }
    if (last && *joules != *last) {
      const std::lock_guard lock(mutex_);
      samples_.push_back({before + (after - before) / 2, *joules});
    }
    last = joules;
    if (after - before < kMinReadInterval) {
      std::this_thread::sleep_for(kMinReadInterval - (after - before));
    }
  }
}

bool EnergySampler::has_change_after(EnergyClock::time_point t) const {
  const std::lock_guard lock(mutex_);
  return !samples_.empty() && samples_.back().at > t;
}

std::optional<double> EnergySampler::joules_between(EnergyClock::time_point t0,
                                                    EnergyClock::time_point t1,
                                                    std::string* why_not) const {
  const std::lock_guard lock(mutex_);
  return energy_between(samples_, t0, t1, why_not);
}

bool EnergySampler::read_failed() const {
  const std::lock_guard lock(mutex_);
  return read_failed_;
}

std::vector<EnergySample> EnergySampler::samples() const {
  const std::lock_guard lock(mutex_);
  return samples_;
}

}  // namespace fp8lab::bench
