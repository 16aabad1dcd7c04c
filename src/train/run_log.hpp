// Run logging pieces of the trainer: metrics.jsonl lines, the per-step log line, a terminal
// progress bar with ETA, and timestamps.
#pragma once

#include "fp8lab/trainer.hpp"
#include "core/utc_time.hpp"

#include <filesystem>
#include <string>

namespace fp8lab {

// Appends one JSON line: step, loss, lr, grad_norm, tokens_per_s, peak_mib, skipped_steps
// (+ val_loss when present). Written and flushed per line, so a crash loses at most one line.
void append_metrics(const std::filesystem::path& file, const StepRecord& r, std::int64_t skipped);

// Keeps only the lines with step <= `step` (a resumed run continues one consistent history).
void truncate_metrics(const std::filesystem::path& file, std::int64_t step);

// "step   12/100 | loss 3.2145 | lr 1.00e-03 | gnorm 0.812 | 5123 tok/s | peak 12.3 MiB |
// eta 1m40s": the time left at this run's pace so far, on every line before the last (none
// when eta_seconds is not finite).
std::string format_step_line(const StepRecord& r, std::int64_t total_steps, double eta_seconds);

// A single-line bar on stderr, redrawn in place; inert when disabled (not a terminal).
class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled) {}
  void draw(std::int64_t step, std::int64_t total, double loss, double eta_seconds);
  void clear();  // erase the bar so a log line can take its place

 private:
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace fp8lab
