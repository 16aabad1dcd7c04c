// Wall-clock timestamps for records: run.json, output-directory markers and lock holders.
#pragma once

#include <string>

namespace fp8lab {

std::string utc_now_iso8601();  // "2026-12-02T11:50:00Z"

}  // namespace fp8lab
