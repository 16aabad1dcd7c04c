#include "core/utc_time.hpp"

#include <fmt/format.h>

#include <cmath>
#include <ctime>

namespace fp8lab {

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(std::isfinite(seconds) && seconds > 0 ? seconds + 0.5 : 0);
  if (s >= 3600) return fmt::format("{}h{:02}m{:02}s", s / 3600, s / 60 % 60, s % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

}  // namespace fp8lab
