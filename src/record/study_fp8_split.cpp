// The FP8 arms' gap split into the weights' share and the FP8 forward's (study_fp8_split.hpp).
#include "record/study_fp8_split.hpp"

#include <fmt/format.h>

#include <map>

#include "record/record.hpp"
#include "record/study_pairs.hpp"

namespace fp8lab::record {
namespace {

// One variant's three parts over its pairs: the ΔCE under its own policy, the weights' share
// and the FP8 forward's share (own minus weights, within each arm).
struct SplitSummary {
  std::string variant;
  Interval own, weights, forward;
};

std::vector<SplitSummary> summarise(const std::vector<Fp8GapSplit>& splits) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Fp8GapSplit*>> by_variant;
  for (const Fp8GapSplit& s : splits) {
    if (by_variant[s.variant].empty()) order.push_back(s.variant);
    by_variant[s.variant].push_back(&s);
  }
  std::vector<SplitSummary> out;
  for (const std::string& v : order) {
    std::vector<double> own, weights, forward;
    for (const Fp8GapSplit* s : by_variant[v]) {
      own.push_back(s->own_d_ce);
      weights.push_back(s->weights_d_ce);
      forward.push_back(s->own_d_ce - s->weights_d_ce);
    }
    out.push_back({v, mean_interval(own), mean_interval(weights), mean_interval(forward)});
  }
  return out;
}

// A part's mean and where its interval lies, for the verdict line.
std::string part_words(const Interval& i) {
  if (i.n < 2) return fmt::format("{:+.4f} (one pair: no interval)", i.mean);
  const char* where = i.lo > 0 ? "above 0" : i.hi < 0 ? "below 0" : "around 0";
  return fmt::format("{:+.4f} (interval {:+.4f} to {:+.4f}, {})", i.mean, i.lo, i.hi, where);
}

}  // namespace

std::string fp8_gap_split_markdown(const std::vector<Fp8GapSplit>& splits) {
  const std::vector<SplitSummary> summaries = summarise(splits);
  if (summaries.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  for (const SplitSummary& s : summaries)
    rows.push_back({s.variant, std::to_string(s.own.n), fmt::format("{:+.4f}", s.own.mean),
                    fmt::format("{:+.4f}", s.weights.mean), interval_text(s.weights),
                    fmt::format("{:+.4f}", s.forward.mean), interval_text(s.forward)});
  std::string md =
      "\n## Where the FP8 arms' gap lies\n\nEach FP8 arm's final weights scored again with every "
      "linear in BF16 (\"CE under bf16\") against its seed's BF16 arm: the gap its training left "
      "in the weights. The rest of its ΔCE, its own score minus that one, is what scoring with "
      "the FP8 forward adds. Means over the seed pairs, 95% Student-t intervals.\n\n";
  md += markdown_table({"variant", "pairs", "ΔCE, own policy", "ΔCE, weights in BF16",
                        "95% interval", "added by the FP8 forward", "95% interval"},
                       rows);
  md += "\n";
  for (const SplitSummary& s : summaries)
    md += fmt::format("- **{}**: the weights {}; the FP8 forward adds {}.\n", s.variant,
                      part_words(s.weights), part_words(s.forward));
  return md;
}

nlohmann::json fp8_gap_split_json(const std::vector<Fp8GapSplit>& splits) {
  nlohmann::json out = nlohmann::json::array();
  for (const SplitSummary& s : summarise(splits))
    out.push_back({{"variant", s.variant},
                   {"pairs", s.own.n},
                   {"own", interval_json(s.own)},
                   {"weights", interval_json(s.weights)},
                   {"forward", interval_json(s.forward)}});
  return out;
}

}  // namespace fp8lab::record
