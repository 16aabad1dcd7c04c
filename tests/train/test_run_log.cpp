// The trainer's log line and durations (train/run_log.hpp).
#include "train/run_log.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace fp8lab {
namespace {

StepRecord record(std::int64_t step) {
  StepRecord r;
  r.step = step;
  r.loss = 3.21449;
  r.lr = 1e-3;
  r.grad_norm = 0.8123;
  r.tokens_per_s = 5123.4;
  r.peak_mib = 12.34;
  return r;
}

TEST(RunLog, DurationsReadAsHoursMinutesSeconds) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(44.6), "45s");
  EXPECT_EQ(format_duration(59.4), "59s");
  EXPECT_EQ(format_duration(125), "2m05s");
  EXPECT_EQ(format_duration(3723), "1h02m03s");
  EXPECT_EQ(format_duration(-3), "0s");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "0s");
  EXPECT_EQ(format_duration(std::nan("")), "0s");
}

TEST(RunLog, StepLineEndsWithTheTimeLeftUntilTheLastStep) {
  EXPECT_EQ(format_step_line(record(12), 100, 100.2),
            "step  12/100 | loss 3.2145 | lr 1.00e-03 | gnorm 0.812 | 5123 tok/s | peak 12.3 MiB"
            " | eta 1m40s");
  StepRecord val = record(50);
  val.val_loss = 3.5;
  EXPECT_EQ(format_step_line(val, 100, 7),
            "step  50/100 | loss 3.2145 | lr 1.00e-03 | gnorm 0.812 | 5123 tok/s | peak 12.3 MiB"
            " | val 3.5000 | eta 7s");
  // The last step has nothing left; a run with no pace yet (NaN) prints no guess.
  EXPECT_EQ(format_step_line(record(100), 100, 0),
            "step 100/100 | loss 3.2145 | lr 1.00e-03 | gnorm 0.812 | 5123 tok/s | peak 12.3 MiB");
  EXPECT_EQ(format_step_line(record(1), 100, std::nan("")).find("eta"), std::string::npos);
}

}  // namespace
}  // namespace fp8lab
