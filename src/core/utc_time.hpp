// Wall-clock timestamps for records (run.json, output-directory markers and lock holders) and
// durations for people (log lines, progress bars, a study's time left).
#pragma once

#include <string>

namespace fp8lab {

std::string utc_now_iso8601();  // "2026-12-02T11:50:00Z"

// "45s", "2m05s", "1h02m03s" (rounded to the second; 0s for a negative or non-finite value).
std::string format_duration(double seconds);

}  // namespace fp8lab
