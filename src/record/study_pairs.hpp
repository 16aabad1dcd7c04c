// Seed pairs of a study: each arm paired with its group's BF16 reference, the pairs of one
// variant (the same recipe in every seed group) summarised by their mean and a 95% Student-t
// interval, the null arm's pairs read as the protocol's own noise, and a verdict in words.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace fp8lab::record {

// One arm against its reference: ΔCE and ΔBPB (arm minus reference, scored under the arm's own
// policy and the reference's bf16).
struct SeedPair {
  std::string variant, group, arm;
  bool null_arm = false;
  double d_ce = 0, d_bpb = 0;
  // false: a bf16 arm that changes something else (AdamW's moments, say): its verdict gives the
  // interval alone, without the FP8 recipe's +0.03 and goal clauses.
  bool fp8 = true;
};

struct Interval {
  int n = 0;
  double mean = 0, sd = 0, lo = 0, hi = 0;  // lo/hi: the 95% interval of the mean (n >= 2)
};

// Mean, sample standard deviation and the two-sided 95% Student-t interval of the mean.
Interval mean_interval(const std::vector<double>& values);
// An interval as a results.md cell ("+0.0018 to +0.0071", "—" below two values) and as
// results.json's {n, mean, sd, lo95, hi95}.
std::string interval_text(const Interval& i);
nlohmann::json interval_json(const Interval& i);
// The 0.975 quantile of Student's t with `df` degrees of freedom (df >= 1).
double student_t975(int df);
// The fewest pairs n (>= 2) whose 95% interval of the mean, at sample sd `sd`, is no wider than
// ±half_width: t975(n - 1) sd / sqrt(n) <= half_width. 0 when more than `most` would be needed.
int pairs_to_resolve(double sd, double half_width, int most = 1000);

struct VariantSummary {
  std::string variant;
  bool null_arm = false;
  std::vector<SeedPair> pairs;
  Interval ce, bpb;
  std::string verdict;  // in words, for the ΔCE interval
  bool fp8 = true;      // as its pairs' SeedPair::fp8
};

std::vector<VariantSummary> summarise_pairs(const std::vector<SeedPair>& pairs);

// The "Seed pairs" section of results.md: a row per variant (every pair's ΔCE, the mean and the
// interval, ΔBPB likewise), the noise floor, the ranking where intervals separate, the verdict.
// `score`: empty for the main scoring; else the name of a further scoring (fp8lab/study.hpp,
// StudyScore) and `score_args` its eval arguments, named in the section's heading and text.
std::string seed_pairs_markdown(const std::vector<VariantSummary>& summaries,
                                const std::string& score = "", const std::string& score_args = "");
nlohmann::json seed_pairs_json(const std::vector<VariantSummary>& summaries);

// One way of scoring the arms (the main one, named "" here, or a further scoring) and its
// summaries.
struct ScoringSummaries {
  std::string name;
  std::vector<VariantSummary> summaries;
};
// "The protocol's noise, by scoring" in results.md: per scoring the null arm's pairs, their mean
// and sd, the ± within which a mean gap is not resolved with those pairs, and the pairs ±0.005
// would take at that sd; then the quietest scoring. Empty unless two scorings exist and some
// null arm has two pairs.
std::string noise_by_scoring_markdown(const std::vector<ScoringSummaries>& scorings);

// One pair's validation losses, arm minus reference, at each step both arms validated.
struct PairGaps {
  std::string variant;
  std::vector<std::pair<double, double>> gaps;  // (step, Δ validation loss), step ascending
};
// The gaps of one arm against its reference: the steps both list, in the arm's order.
std::vector<std::pair<double, double>> validation_gaps(
    const std::vector<std::pair<double, double>>& arm,
    const std::vector<std::pair<double, double>>& reference);

// "Where the pairs part" in results.md: for each variant with two or more pairs, the sd over its
// pairs of the validation-loss gap at each step that every such pair validated. It shows when
// in training two runs part and whether they have come back together by the end, where the
// final score is taken. Empty when no variant has two pairs or they share no step.
std::string gaps_by_step_markdown(const std::vector<PairGaps>& pairs);

}  // namespace fp8lab::record
