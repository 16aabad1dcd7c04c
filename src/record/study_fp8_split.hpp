// Where an FP8 arm's gap lies: in the weights its training left, or in scoring them with the FP8
// forward. Every study arm is scored twice (eval.json under its own policy, eval_bf16.json with
// every linear in BF16); for an FP8 arm the second against its seed's BF16 arm is the gap in the
// weights, and the arm's own two scores differ by what the FP8 forward adds at scoring time.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fp8lab::record {

struct Fp8GapSplit {
  std::string variant;
  double own_d_ce = 0;      // the arm's ΔCE under its own policy (its seed pair's)
  double weights_d_ce = 0;  // its weights scored in BF16, minus its reference's BF16 score
};

// "Where the FP8 arms' gap lies" in results.md: per FP8 variant, the mean of each part over its
// seed pairs with the 95% interval, and in words where each interval lies. Empty when no FP8 arm
// has finished.
std::string fp8_gap_split_markdown(const std::vector<Fp8GapSplit>& splits);
// The same per variant: {variant, pairs, own, weights, forward}, each part {n, mean, sd, lo95,
// hi95}.
nlohmann::json fp8_gap_split_json(const std::vector<Fp8GapSplit>& splits);

}  // namespace fp8lab::record
