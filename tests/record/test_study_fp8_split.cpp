// The FP8 arms' gap split into the weights' share and the FP8 forward's
// (src/record/study_fp8_split.cpp): means, intervals and words against values worked by hand.
#include <gtest/gtest.h>

#include "record/study_fp8_split.hpp"

namespace fp8lab::record {
namespace {

std::vector<Fp8GapSplit> arms(const std::string& variant, const std::vector<double>& own,
                              const std::vector<double>& weights) {
  std::vector<Fp8GapSplit> out;
  for (std::size_t i = 0; i < own.size(); ++i) out.push_back({variant, own[i], weights[i]});
  return out;
}

TEST(StudyFp8Split, EachPartGetsItsMeanIntervalAndWords) {
  // tensorwise: weights 0.0042, 0.0030, 0.0021 -> mean 0.0031, sd 0.0010536, half-width
  // 4.3027 * 0.0010536 / sqrt(3) = 0.002617; forward 0.0014, 0.0012, 0.0015 -> mean 0.0013667,
  // sd 0.00015275, half-width 0.0003795.
  std::vector<Fp8GapSplit> all =
      arms("tensorwise", {0.0056, 0.0042, 0.0036}, {0.0042, 0.0030, 0.0021});
  for (auto a : arms("rowwise", {0.002, 0.000, 0.001}, {0.001, -0.001, 0.0005})) all.push_back(a);
  for (auto a : arms("blockwise", {0.004}, {0.001})) all.push_back(a);
  const std::string md = fp8_gap_split_markdown(all);
  EXPECT_NE(md.find("| tensorwise | 3 | +0.0045 | +0.0031 | +0.0005 to +0.0057 | +0.0014 | "
                    "+0.0010 to +0.0017 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("**tensorwise**: the weights +0.0031 (interval +0.0005 to +0.0057, above 0); "
                    "the FP8 forward adds +0.0014 (interval +0.0010 to +0.0017, above 0)"),
            std::string::npos)
      << md;
  // rowwise: weights 0.001, -0.001, 0.0005 straddle 0; forward 0.001, 0.001, 0.0005.
  EXPECT_NE(md.find("**rowwise**: the weights +0.0002 (interval"), std::string::npos) << md;
  EXPECT_NE(md.find(", around 0); the FP8 forward adds +0.0008"), std::string::npos) << md;
  EXPECT_NE(md.find("**blockwise**: the weights +0.0010 (one pair: no interval); the FP8 forward "
                    "adds +0.0030 (one pair: no interval)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| blockwise | 1 | +0.0040 | +0.0010 | — | +0.0030 | — |"), std::string::npos)
      << md;

  const nlohmann::json j = fp8_gap_split_json(all);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["variant"], "tensorwise");
  EXPECT_EQ(j[0]["pairs"], 3);
  EXPECT_NEAR(j[0]["weights"]["mean"].get<double>(), 0.0031, 1e-12);
  EXPECT_NEAR(j[0]["weights"]["hi95"].get<double>() - 0.0031, 0.002617, 1e-6);
  EXPECT_NEAR(j[0]["forward"]["mean"].get<double>(), 0.0013667, 1e-7);
  EXPECT_NEAR(j[0]["forward"]["sd"].get<double>(), 0.00015275, 1e-8);
  EXPECT_NEAR(j[0]["own"]["mean"].get<double>(), 0.0044667, 1e-7);
  EXPECT_EQ(j[2]["pairs"], 1);
}

TEST(StudyFp8Split, NoFp8ArmNoSection) {
  EXPECT_EQ(fp8_gap_split_markdown({}), "");
  EXPECT_TRUE(fp8_gap_split_json({}).empty());
}

}  // namespace
}  // namespace fp8lab::record
