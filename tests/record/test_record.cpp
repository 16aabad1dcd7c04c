#include "fp8lab/error.hpp"
#include "record/record.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <regex>

namespace fp8lab {
namespace {

TEST(Record, EmaIsDebiasedAndSmooths) {
  // A constant series has a constant debiased EMA from the first point on.
  auto flat = ema_debiased({3.0, 3.0, 3.0, 3.0}, 0.9);
  for (double v : flat) EXPECT_NEAR(v, 3.0, 1e-12);
  // Hand-computed: alpha 0.5 over (1, 3): ema1 = 0.5 -> /0.5 = 1; ema2 = 0.25 + 1.5 = 1.75 -> /0.75.
  auto two = ema_debiased({1.0, 3.0}, 0.5);
  EXPECT_NEAR(two[0], 1.0, 1e-12);
  EXPECT_NEAR(two[1], 1.75 / 0.75, 1e-12);
  EXPECT_THROW(ema_debiased({1.0}, 1.0), Error);
}

TEST(Record, MarkdownTableAlignsNumbersRight) {
  std::string t = markdown_table({"arm", "CE"}, {{"bf16", "3.512"}, {"fp8-mlp", "3.520"}});
  EXPECT_EQ(t, "| arm | CE |\n|---|---:|\n| bf16 | 3.512 |\n| fp8-mlp | 3.520 |\n");
  EXPECT_THROW(markdown_table({"a", "b"}, {{"only one"}}), Error);
}

TEST(Record, LineChartHasOnePolylinePerFiniteRunAndEscapesNames) {
  CurveSeries a{"bf16 <raw>", {{0, 5.0}, {1, 4.0}, {2, NAN}, {3, 3.0}, {4, 2.5}}, false};
  CurveSeries b{"fp8 ema", {{0, 5.1}, {4, 2.6}}, true};
  std::string svg = line_chart_svg({a, b}, "loss", "step", "CE (nats)");
  std::regex polyline("<polyline");
  auto count = std::distance(std::sregex_iterator(svg.begin(), svg.end(), polyline), std::sregex_iterator());
  EXPECT_EQ(count, 3);  // series a is split by its NaN
  EXPECT_NE(svg.find("bf16 &lt;raw&gt;"), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
  EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
}

TEST(Record, FlopEstimateMatchesHandCount) {
  // d=512, L=8, T=2048, V=50304, hidden 2048: 6*8*(4*512^2 + 2*512*2048) + 6*8*2048*512 + 6*512*50304
  const double expected = 6.0 * 8 * (4.0 * 512 * 512 + 2.0 * 512 * 2048) + 6.0 * 8 * 2048 * 512 +
                          6.0 * 512 * 50304;
  EXPECT_DOUBLE_EQ(gpt_train_flops_per_token(8, 512, 2048, 50304, 2048), expected);
}

TEST(Record, GitSourceInfoReadsThisRepository) {
  SourceInfo info = git_source_info(FP8LAB_SOURCE_DIR);
  if (info.commit == "unknown") GTEST_SKIP() << "not a git checkout (or git missing)";
  EXPECT_EQ(info.commit.size(), 40u);
  EXPECT_TRUE(std::regex_match(info.commit, std::regex("[0-9a-f]{40}")));
  SourceInfo none = git_source_info("/nonexistent/path");
  EXPECT_EQ(none.commit, "unknown");
  EXPECT_TRUE(none.dirty);
}

}  // namespace
}  // namespace fp8lab
