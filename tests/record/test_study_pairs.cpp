// Seed-pair statistics of the study record (src/record/study_pairs.cpp): the Student-t interval
// against textbook values, and the verdict's words for each case.
#include "record/study_pairs.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

namespace fp8lab::record {
namespace {

TEST(StudyPairs, StudentQuantilesMatchTheTable) {
  EXPECT_NEAR(student_t975(1), 12.706, 1e-3);
  EXPECT_NEAR(student_t975(2), 4.303, 1e-3);
  EXPECT_NEAR(student_t975(30), 2.042, 1e-3);   // beyond the table: the expansion
  EXPECT_NEAR(student_t975(120), 1.980, 1e-3);
}

TEST(StudyPairs, IntervalOfThreePairs) {
  // mean 0.02, sd 0.01: half-width 4.3027 * 0.01 / sqrt(3) = 0.024842
  const Interval i = mean_interval({0.01, 0.02, 0.03});
  EXPECT_EQ(i.n, 3);
  EXPECT_NEAR(i.mean, 0.02, 1e-12);
  EXPECT_NEAR(i.sd, 0.01, 1e-12);
  EXPECT_NEAR(i.hi - i.mean, 0.024842, 1e-5);
  EXPECT_NEAR(i.mean - i.lo, 0.024842, 1e-5);
  const Interval one = mean_interval({0.5});
  EXPECT_EQ(one.n, 1);
  EXPECT_EQ(one.lo, 0.5);
}

std::vector<SeedPair> pairs_of(const std::string& variant, std::vector<double> d, bool null_arm = false) {
  std::vector<SeedPair> out;
  for (std::size_t i = 0; i < d.size(); ++i)
    out.push_back({variant, fmt::format("s{}", i), fmt::format("{}{}", variant, i), null_arm, d[i],
                   d[i]});
  return out;
}

TEST(StudyPairs, VerdictsSayWhereTheIntervalLies) {
  std::vector<SeedPair> all = pairs_of("tensorwise", {0.029, 0.036, 0.031});
  for (auto p : pairs_of("blockwise", {0.001, -0.002, 0.003})) all.push_back(p);
  for (auto p : pairs_of("null", {0.001, -0.001, 0.0005}, true)) all.push_back(p);
  for (auto p : pairs_of("single", {0.01})) all.push_back(p);
  const auto s = summarise_pairs(all);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_NE(s[0].verdict.find("worse than BF16"), std::string::npos) << s[0].verdict;
  EXPECT_NE(s[0].verdict.find("does not exclude +0.03"), std::string::npos) << s[0].verdict;
  EXPECT_NE(s[1].verdict.find("within the noise of BF16"), std::string::npos) << s[1].verdict;
  EXPECT_NE(s[1].verdict.find("excludes +0.03"), std::string::npos) << s[1].verdict;
  EXPECT_NE(s[1].verdict.find("meets the goal"), std::string::npos) << s[1].verdict;
  EXPECT_NE(s[2].verdict.find("protocol's own noise"), std::string::npos) << s[2].verdict;
  EXPECT_NE(s[3].verdict.find("one seed pair"), std::string::npos) << s[3].verdict;
  const std::string md = seed_pairs_markdown(s);
  // blockwise's interval lies wholly below tensorwise's: ranked apart.
  EXPECT_NE(md.find("blockwise < tensorwise"), std::string::npos) << md;
}

// A bf16 option's pairs (AdamW's moments in bf16, say) get the interval's words alone: the FP8
// recipe's +0.03 and its goal are not theirs.
TEST(StudyPairs, ABf16OptionGetsNoFp8Clauses) {
  std::vector<SeedPair> all = pairs_of("bf16 bf16-moments", {0.001, -0.002, 0.003});
  for (SeedPair& p : all) p.fp8 = false;
  for (auto p : pairs_of("null", {0.001, -0.001, 0.0005}, true)) all.push_back(p);
  const auto s = summarise_pairs(all);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_FALSE(s[0].fp8);
  EXPECT_NE(s[0].verdict.find("within the noise of BF16: the interval"), std::string::npos)
      << s[0].verdict;
  EXPECT_EQ(s[0].verdict.find("+0.03"), std::string::npos) << s[0].verdict;
  EXPECT_EQ(s[0].verdict.find("goal"), std::string::npos) << s[0].verdict;
}

// The goal needs the null arm to resolve 0.005: a wide null, or none, keeps a small mean from
// being called the goal met.
TEST(StudyPairs, TheGoalNeedsANullArmThatResolvesIt) {
  const std::vector<SeedPair> block = pairs_of("blockwise", {0.001, -0.002, 0.003});
  std::vector<SeedPair> wide = block;
  for (auto p : pairs_of("null", {-0.0165, -0.0142, 0.0059}, true)) wide.push_back(p);
  const auto s = summarise_pairs(wide);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].verdict.find("meets the goal"), std::string::npos) << s[0].verdict;
  EXPECT_NE(s[0].verdict.find("the protocol cannot yet see 0.005"), std::string::npos) << s[0].verdict;
  EXPECT_NE(s[0].verdict.find("±0.0306"), std::string::npos) << s[0].verdict;
  // How many pairs this null's sd (0.0123) needs for ±0.005: t975(25) 0.0123 / sqrt(26) =
  // 0.00498, where 25 pairs give 0.00509.
  EXPECT_NE(s[1].verdict.find("at this sd, ±0.005 needs 26 pairs"), std::string::npos)
      << s[1].verdict;
  EXPECT_EQ(seed_pairs_json(s)[1]["pairs_for_goal"], 26);
  EXPECT_FALSE(seed_pairs_json(s)[0].contains("pairs_for_goal"));
  const auto alone = summarise_pairs(block);
  EXPECT_EQ(alone[0].verdict.find("meets the goal"), std::string::npos) << alone[0].verdict;
  EXPECT_NE(alone[0].verdict.find("no null arm"), std::string::npos) << alone[0].verdict;
}

// The goal is on the mean: a recipe that meets it with an interval still reaching past 0.005 is
// told so, with the pairs that would bring the interval's upper end within it. The long study's
// tensorwise pairs, rounded to 4 places: mean +0.0045, sd 0.00103, interval to +0.0070.
TEST(StudyPairs, AGoalMetWithAWideIntervalSaysHowFarItReaches) {
  std::vector<SeedPair> all = pairs_of("tensorwise", {0.0056, 0.0042, 0.0036});
  for (auto p : pairs_of("null", {-0.0007, -0.0026, -0.0001}, true)) all.push_back(p);
  const auto s = summarise_pairs(all);
  ASSERT_EQ(s.size(), 2u);
  const std::string& v = s[0].verdict;
  EXPECT_NE(v.find("worse than BF16"), std::string::npos) << v;
  EXPECT_NE(v.find("meets the goal"), std::string::npos) << v;
  EXPECT_NE(v.find("the interval still reaches +0.0070, past 0.005"), std::string::npos) << v;
  // Half-width wanted 0.005 - 0.004467 = 0.000533 at sd 0.001026, so t975(n-1) / sqrt(n) <=
  // 0.520: n = 16 gives 2.131 / 4 = 0.533, n = 17 gives 2.120 / 4.123 = 0.514.
  EXPECT_NE(v.find("at this mean and sd, 17 pairs would bring it within 0.005"), std::string::npos)
      << v;
  // A mean just under the goal: ±0.00001 at sd 0.001 would take some 38,000 pairs.
  std::vector<SeedPair> edge = pairs_of("tensorwise", {0.00399, 0.00499, 0.00599});
  for (auto p : pairs_of("null", {-0.0007, -0.0026, -0.0001}, true)) edge.push_back(p);
  const auto e = summarise_pairs(edge);
  EXPECT_NE(e[0].verdict.find("more than 1000 pairs would not bring it within 0.005"),
            std::string::npos)
      << e[0].verdict;
  // An interval wholly within the goal gets no such clause.
  std::vector<SeedPair> tight = pairs_of("blockwise", {0.001, 0.0015, 0.0012});
  for (auto p : pairs_of("null", {-0.0007, -0.0026, -0.0001}, true)) tight.push_back(p);
  const auto t = summarise_pairs(tight);
  EXPECT_NE(t[0].verdict.find("meets the goal"), std::string::npos) << t[0].verdict;
  EXPECT_EQ(t[0].verdict.find("still reaches"), std::string::npos) << t[0].verdict;
}

// The pairs a protocol needs: the smallest n whose interval half-width t975(n-1) sd / sqrt(n)
// reaches the target, 0 past the limit.
TEST(StudyPairs, PairsToResolveIsTheSmallestSufficientCount) {
  for (const double sd : {0.001, 0.004, 0.0123, 0.03}) {
    const int n = pairs_to_resolve(sd, 0.005);
    ASSERT_GE(n, 2) << sd;
    EXPECT_LE(student_t975(n - 1) * sd / std::sqrt(static_cast<double>(n)), 0.005) << sd;
    if (n > 2) {
      EXPECT_GT(student_t975(n - 2) * sd / std::sqrt(static_cast<double>(n - 1)), 0.005) << sd;
    }
  }
  // Two pairs: 12.706 * 0.001 / sqrt(2) = 0.0090 > 0.005; three: 4.303 * 0.001 / sqrt(3) = 0.0025.
  EXPECT_EQ(pairs_to_resolve(0.001, 0.005), 3);
  EXPECT_EQ(pairs_to_resolve(1.0, 0.005, 1000), 0);  // would need ~150,000
}

TEST(StudyPairs, OverlappingIntervalsAreNotRanked) {
  std::vector<SeedPair> all = pairs_of("a", {0.01, 0.03});
  for (auto p : pairs_of("b", {0.015, 0.025})) all.push_back(p);
  const std::string md = seed_pairs_markdown(summarise_pairs(all));
  EXPECT_NE(md.find("a ≈ b"), std::string::npos) << md;
}

// The noise table: a row per scoring with two null pairs, its sd and the pairs ±0.005 would
// take; the quietest named; nothing with one scoring or without null pairs.
TEST(StudyPairs, NoiseByScoringNamesTheQuietestScoring) {
  auto with_null = [](std::vector<double> null_d) {
    std::vector<SeedPair> all = pairs_of("bf16 null", std::move(null_d), true);
    for (auto p : pairs_of("blockwise", {0.01, 0.02, 0.0})) all.push_back(p);
    return summarise_pairs(all);
  };
  const std::vector<ScoringSummaries> scorings{{"", with_null({-0.0165, -0.0142, 0.0059})},
                                               {"in-distribution", with_null({0.001, -0.001, 0.0})},
                                               {"one-pair", with_null({0.002})}};
  const std::string md = noise_by_scoring_markdown(scorings);
  EXPECT_NE(md.find("## The protocol's noise, by scoring"), std::string::npos) << md;
  // sd of (-0.0165, -0.0142, 0.0059): 0.0123; of (0.001, -0.001, 0): 0.0010 (3 pairs for 0.005).
  EXPECT_NE(md.find("| main (`eval_args`) | 3 | -0.0083 | 0.0123 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `in-distribution` | 3 | +0.0000 | 0.0010 | ±0.0025 | 3 |"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("one-pair"), std::string::npos) << "a scoring with one null pair: " << md;
  EXPECT_NE(md.find("The quietest scoring here: `in-distribution` (sd 0.0010)"), std::string::npos)
      << md;
  EXPECT_EQ(noise_by_scoring_markdown({scorings[0]}), "");
  EXPECT_EQ(noise_by_scoring_markdown({{"", summarise_pairs(pairs_of("blockwise", {0.01, 0.02}))},
                                       {"x", summarise_pairs(pairs_of("blockwise", {0.01, 0.0}))}}),
            "");
}

// An arm's gaps are taken at the steps its reference also validated, in the arm's order.
TEST(StudyPairs, ValidationGapsMatchSteps) {
  const auto gaps = validation_gaps({{250, 3.5}, {500, 2.8}, {750, 2.0}}, {{250, 3.4}, {750, 2.5}});
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].first, 250);
  EXPECT_NEAR(gaps[0].second, 0.1, 1e-12);
  EXPECT_EQ(gaps[1].first, 750);
  EXPECT_NEAR(gaps[1].second, -0.5, 1e-12);
}

// The table: a row per variant with two or more pairs, a column per step all of them share, the
// sd of the gaps there; a variant with one pair and a step one pair lacks are left out.
TEST(StudyPairs, GapsByStepGiveTheSdWherePairsPart) {
  const std::vector<PairGaps> pairs{
      {"bf16 null", {{250, 0.004}, {750, -0.05}, {1150, -0.017}}},
      {"bf16 null", {{250, -0.002}, {750, -0.031}, {1150, -0.013}}},
      {"bf16 null", {{250, 0.004}, {500, 0.1}, {750, 0.041}, {1150, 0.013}}},
      {"fp8-mlp rowwise", {{250, 0.5}, {750, 0.5}, {1150, 0.5}}}};
  const std::string md = gaps_by_step_markdown(pairs);
  EXPECT_NE(md.find("## Where the pairs part"), std::string::npos) << md;
  EXPECT_NE(md.find("| variant | pairs | step 250 | step 750 | step 1150 |"), std::string::npos)
      << md;
  // sd of (0.004, -0.002, 0.004) = 0.0035; of (-0.05, -0.031, 0.041) = 0.0480; of
  // (-0.017, -0.013, 0.013) = 0.0163.
  EXPECT_NE(md.find("| bf16 null | 3 | 0.0035 | 0.0480 | 0.0163 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("rowwise"), std::string::npos) << "one pair only: " << md;
  EXPECT_EQ(md.find("step 500"), std::string::npos) << "a step one pair lacks: " << md;
  EXPECT_EQ(gaps_by_step_markdown({pairs[3]}), "");
  EXPECT_EQ(gaps_by_step_markdown({{"a", {{1, 0.1}}}, {"a", {{2, 0.1}}}}), "");
}

}  // namespace
}  // namespace fp8lab::record
