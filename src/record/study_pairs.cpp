// Seed-pair statistics of a study (study_pairs.hpp).
#include "record/study_pairs.hpp"

#include "fp8lab/error.hpp"
#include "record/record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace fp8lab::record {

double student_t975(int df) {
  FP8LAB_CHECK(df >= 1, "student_t975: degrees of freedom {} must be >= 1", df);
  static const double kTable[] = {12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646,
                                  2.3060, 2.2622, 2.2281, 2.2010, 2.1788, 2.1604, 2.1448,
                                  2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860};
  if (df <= 20) return kTable[df - 1];
  // Beyond the table: the Cornish-Fisher expansion around the normal quantile (error < 1e-4).
  const double z = 1.959964, d = df;
  return z + (z * z * z + z) / (4 * d) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * d * d);
}

int pairs_to_resolve(double sd, double half_width, int most) {
  FP8LAB_CHECK(sd >= 0 && half_width > 0, "pairs_to_resolve: sd {} and half width {}", sd,
               half_width);
  for (int n = 2; n <= most; ++n)
    if (student_t975(n - 1) * sd / std::sqrt(static_cast<double>(n)) <= half_width) return n;
  return 0;
}

Interval mean_interval(const std::vector<double>& values) {
  Interval r;
  r.n = static_cast<int>(values.size());
  if (r.n == 0) return r;
  double sum = 0;
  for (double v : values) sum += v;
  r.mean = sum / r.n;
  if (r.n < 2) {
    r.lo = r.hi = r.mean;
    return r;
  }
  double ss = 0;
  for (double v : values) ss += (v - r.mean) * (v - r.mean);
  r.sd = std::sqrt(ss / (r.n - 1));
  const double half = student_t975(r.n - 1) * r.sd / std::sqrt(static_cast<double>(r.n));
  r.lo = r.mean - half;
  r.hi = r.mean + half;
  return r;
}

namespace {

constexpr double kTodaysGap = 0.03;  // tensorwise FP8's ΔCE at gpt50m, the gap to close
constexpr double kGoalGap = 0.005;   // the mean ΔCE a recipe must reach

// `null`: the null arm's summary (nullptr without one): the goal also needs the protocol to
// resolve kGoalGap, i.e. the null's interval to be no wider than ±kGoalGap.
std::string verdict_of(const VariantSummary& s, const VariantSummary* null) {
  const Interval& c = s.ce;
  if (c.n < 2) return fmt::format("one seed pair (ΔCE {:+.4f}): an interval needs two or more", c.mean);
  if (s.null_arm) {
    const int needed = pairs_to_resolve(c.sd, kGoalGap);
    return fmt::format(
        "the protocol's own noise: two BF16 runs differing only in summation order differ by "
        "{:+.4f} on average (sd {:.4f}); with {} pairs, mean gaps within ±{:.4f} nats are not "
        "resolved; at this sd, ±{:.3f} needs {}",
        c.mean, c.sd, c.n, c.hi - c.mean, kGoalGap,
        needed > 0 ? fmt::format("{} pairs", needed) : std::string("more than 1000 pairs"));
  }
  std::string v;
  if (c.hi < 0)
    v = fmt::format("better than BF16: the interval {:+.4f} to {:+.4f} lies below 0", c.lo, c.hi);
  else if (c.lo > 0)
    v = fmt::format("worse than BF16: the interval {:+.4f} to {:+.4f} lies above 0", c.lo, c.hi);
  else
    v = fmt::format("within the noise of BF16: the interval {:+.4f} to {:+.4f} contains 0", c.lo,
                    c.hi);
  if (!s.fp8) return v;  // a bf16 option: the FP8 recipe's gap and goal do not apply
  v += c.hi < kTodaysGap ? fmt::format("; it excludes +{:.2f}", kTodaysGap)
                         : fmt::format("; it does not exclude +{:.2f}", kTodaysGap);
  if (c.n >= 3 && c.mean <= kGoalGap && c.hi < kTodaysGap) {
    const std::string reached = fmt::format("mean ≤ {:.3f} over ≥ 3 pairs", kGoalGap);
    if (null == nullptr || null->ce.n < 2)
      v += fmt::format(" ({}, but no null arm shows whether the protocol can see {:.3f})", reached,
                       kGoalGap);
    else if (null->ce.hi - null->ce.mean > kGoalGap)
      v += fmt::format(" ({}, but the null arm resolves only ±{:.4f}: the protocol cannot yet see "
                       "{:.3f}, so this is not the goal met)",
                       reached, null->ce.hi - null->ce.mean, kGoalGap);
    else
      v += fmt::format(" (meets the goal: {}, and the null arm resolves ±{:.4f})", reached,
                       null->ce.hi - null->ce.mean);
    // The goal is on the mean; where the interval still reaches past it, say so and how many
    // pairs at this sd would bring its upper end within the goal.
    if (c.hi > kGoalGap) {
      const int needed = c.mean < kGoalGap ? pairs_to_resolve(c.sd, kGoalGap - c.mean) : 0;
      v += fmt::format("; the interval still reaches {:+.4f}, past {:.3f}: {}", c.hi, kGoalGap,
                       needed > 0 ? fmt::format("at this mean and sd, {} pairs would bring it "
                                                "within {:.3f}",
                                                needed, kGoalGap)
                                  : fmt::format("at this mean and sd, more than 1000 pairs "
                                                "would not bring it within {:.3f}",
                                                kGoalGap));
    }
  }
  return v;
}

}  // namespace

std::string interval_text(const Interval& i) {
  return i.n < 2 ? "—" : fmt::format("{:+.4f} to {:+.4f}", i.lo, i.hi);
}

nlohmann::json interval_json(const Interval& i) {
  return nlohmann::json{{"n", i.n}, {"mean", i.mean}, {"sd", i.sd}, {"lo95", i.lo}, {"hi95", i.hi}};
}

std::vector<VariantSummary> summarise_pairs(const std::vector<SeedPair>& pairs) {
  std::vector<VariantSummary> out;
  std::map<std::string, std::size_t> at;
  for (const SeedPair& p : pairs) {
    auto [it, fresh] = at.emplace(p.variant, out.size());
    if (fresh) out.push_back({p.variant, p.null_arm, {}, {}, {}, {}, p.fp8});
    out[it->second].pairs.push_back(p);
  }
  for (VariantSummary& s : out) {
    std::vector<double> ce, bpb;
    for (const SeedPair& p : s.pairs) {
      ce.push_back(p.d_ce);
      bpb.push_back(p.d_bpb);
    }
    s.ce = mean_interval(ce);
    s.bpb = mean_interval(bpb);
  }
  const VariantSummary* null = nullptr;
  for (const VariantSummary& s : out)
    if (s.null_arm && (null == nullptr || s.ce.n > null->ce.n)) null = &s;
  for (VariantSummary& s : out) s.verdict = verdict_of(s, null);
  return out;
}

std::string seed_pairs_markdown(const std::vector<VariantSummary>& summaries,
                                const std::string& score, const std::string& score_args) {
  if (summaries.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  for (const VariantSummary& s : summaries) {
    std::string each;
    for (const SeedPair& p : s.pairs)
      each += fmt::format("{}{}: {:+.4f}", each.empty() ? "" : ", ", p.group.empty() ? "-" : p.group,
                          p.d_ce);
    rows.push_back({s.variant, std::to_string(s.ce.n), each, fmt::format("{:+.4f}", s.ce.mean),
                    interval_text(s.ce), fmt::format("{:+.4f}", s.bpb.mean), interval_text(s.bpb)});
  }
  std::string md =
      score.empty()
          ? std::string("\n## Seed pairs\n\nEach arm against the BF16 arm of its own seed group "
                        "(same initial weights, same data order): ΔCE and ΔBPB per pair, their "
                        "mean and the 95% Student-t interval of the mean.\n\n")
          : fmt::format("\n## Seed pairs, scored by `{}`\n\nThe same final weights scored by "
                        "`fp8lab eval {}` under each arm's own policy; pairs, means and "
                        "intervals as above.\n\n",
                        score, score_args);
  md += markdown_table({"variant", "pairs", "ΔCE per pair (group: nats)", "mean ΔCE",
                        "95% interval", "mean ΔBPB", "95% interval"},
                       rows);
  md += "\n";
  for (const VariantSummary& s : summaries)
    md += fmt::format("- **{}**: {}.\n", s.variant, s.verdict);
  // The ranking, only where intervals separate.
  std::vector<const VariantSummary*> ranked;
  for (const VariantSummary& s : summaries)
    if (!s.null_arm && s.ce.n >= 2) ranked.push_back(&s);
  std::sort(ranked.begin(), ranked.end(),
            [](const auto* a, const auto* b) { return a->ce.mean < b->ce.mean; });
  if (ranked.size() >= 2) {
    std::string line;
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      if (i > 0) line += ranked[i - 1]->ce.hi < ranked[i]->ce.lo ? " < " : " ≈ ";
      line += ranked[i]->variant;
    }
    md += "\nRanking by mean ΔCE (\"<\" only where the intervals separate): " + line + ".\n";
  }
  return md;
}

std::string noise_by_scoring_markdown(const std::vector<ScoringSummaries>& scorings) {
  if (scorings.size() < 2) return "";
  std::vector<std::vector<std::string>> rows;
  const ScoringSummaries* quietest = nullptr;
  double quietest_sd = 0;
  for (const ScoringSummaries& sc : scorings) {
    const VariantSummary* null = nullptr;
    for (const VariantSummary& s : sc.summaries)
      if (s.null_arm && (null == nullptr || s.ce.n > null->ce.n)) null = &s;
    if (null == nullptr || null->ce.n < 2) continue;
    const Interval& c = null->ce;
    const int needed = pairs_to_resolve(c.sd, kGoalGap);
    rows.push_back({sc.name.empty() ? "main (`eval_args`)" : "`" + sc.name + "`",
                    std::to_string(c.n), fmt::format("{:+.4f}", c.mean), fmt::format("{:.4f}", c.sd),
                    fmt::format("±{:.4f}", c.hi - c.mean),
                    needed > 0 ? std::to_string(needed) : std::string("> 1000")});
    if (quietest == nullptr || c.sd < quietest_sd) {
      quietest = &sc;
      quietest_sd = c.sd;
    }
  }
  if (rows.empty()) return "";
  std::string md =
      "\n## The protocol's noise, by scoring\n\nThe null arm's pairs under each way of scoring "
      "the same trained arms: their mean and sd, the ± within which a mean gap is not resolved "
      "with these pairs (95%), and the pairs ±" +
      fmt::format("{:.3f}", kGoalGap) + " nats would take at that sd.\n\n";
  md += markdown_table({"scoring", "null pairs", "mean ΔCE", "sd", "unresolved within",
                        fmt::format("pairs for ±{:.3f}", kGoalGap)},
                       rows);
  if (rows.size() >= 2)
    md += fmt::format("\nThe quietest scoring here: {} (sd {:.4f}).\n",
                      quietest->name.empty() ? "the main one" : "`" + quietest->name + "`",
                      quietest_sd);
  return md;
}

nlohmann::json seed_pairs_json(const std::vector<VariantSummary>& summaries) {
  nlohmann::json out = nlohmann::json::array();
  for (const VariantSummary& s : summaries) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const SeedPair& p : s.pairs)
      pairs.push_back({{"group", p.group}, {"arm", p.arm}, {"d_ce", p.d_ce}, {"d_bpb", p.d_bpb}});
    nlohmann::json entry = {{"variant", s.variant},
                            {"null", s.null_arm},
                            {"pairs", pairs},
                            {"d_ce", interval_json(s.ce)},
                            {"d_bpb", interval_json(s.bpb)},
                            {"verdict", s.verdict}};
    // For a null arm: how many pairs a protocol this noisy needs to resolve the goal's gap.
    if (s.null_arm && s.ce.n >= 2) entry["pairs_for_goal"] = pairs_to_resolve(s.ce.sd, kGoalGap);
    out.push_back(entry);
  }
  return out;
}

std::vector<std::pair<double, double>> validation_gaps(
    const std::vector<std::pair<double, double>>& arm,
    const std::vector<std::pair<double, double>>& reference) {
  std::vector<std::pair<double, double>> gaps;
  for (const auto& point : arm) {
    // Not a structured binding: clang before 16 cannot capture one in a lambda.
    const double step = point.first, loss = point.second;
    const auto it = std::find_if(reference.begin(), reference.end(),
                                 [&](const auto& r) { return r.first == step; });
    if (it != reference.end()) gaps.emplace_back(step, loss - it->second);
  }
  return gaps;
}

std::string gaps_by_step_markdown(const std::vector<PairGaps>& pairs) {
  const auto pairs_of = [&](const std::string& variant) {
    return std::count_if(pairs.begin(), pairs.end(),
                         [&](const PairGaps& q) { return q.variant == variant; });
  };
  std::vector<std::string> variants;  // those with two or more pairs, first seen first
  for (const PairGaps& p : pairs)
    if (pairs_of(p.variant) >= 2 &&
        std::find(variants.begin(), variants.end(), p.variant) == variants.end())
      variants.push_back(p.variant);
  // The steps every pair of those variants validated: the first such pair's steps that every
  // other one has too.
  const auto validated = [](const PairGaps& p, double step) {
    return std::any_of(p.gaps.begin(), p.gaps.end(), [&](const auto& g) { return g.first == step; });
  };
  std::vector<double> steps;
  for (const PairGaps& p : pairs) {
    if (std::find(variants.begin(), variants.end(), p.variant) == variants.end()) continue;
    for (const auto& g : p.gaps) steps.push_back(g.first);
    break;
  }
  for (const PairGaps& p : pairs)
    if (std::find(variants.begin(), variants.end(), p.variant) != variants.end())
      std::erase_if(steps, [&](double s) { return !validated(p, s); });
  if (steps.empty()) return "";
  std::vector<std::string> header{"variant", "pairs"};
  for (double s : steps) header.push_back(fmt::format("step {:g}", s));
  std::vector<std::vector<std::string>> rows;
  for (const std::string& v : variants) {
    std::vector<std::string> row{v, std::to_string(pairs_of(v))};
    for (double s : steps) {
      std::vector<double> at;
      for (const PairGaps& p : pairs)
        if (p.variant == v)
          for (const auto& g : p.gaps)
            if (g.first == s) at.push_back(g.second);
      row.push_back(fmt::format("{:.4f}", mean_interval(at).sd));
    }
    rows.push_back(std::move(row));
  }
  return "\n## Where the pairs part\n\nThe sd over each variant's seed pairs of the "
         "validation-loss gap (arm minus its seed's BF16 arm, on the trainer's validation "
         "batches) at each validation step: when two runs part, and whether they have come back "
         "together by the last step, where the final score is taken.\n\n" +
         markdown_table(header, rows);
}

}  // namespace fp8lab::record
