#include "fp8lab/error.hpp"
#include "record/record.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

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

// The numbers of one attribute over the SVG's elements of one kind, e.g. every <text>'s y.
std::vector<double> attribute_values(const std::string& svg, const std::string& element,
                                     const std::string& attribute) {
  std::vector<double> values;
  const std::regex re("<" + element + "[^>]* " + attribute + "=\"([-0-9.]+)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator();
       ++it)
    values.push_back(std::stod((*it)[1]));
  return values;
}

TEST(Record, LineChartLegendListsEveryArmInsideTheChart) {
  std::vector<CurveSeries> many;
  for (int i = 0; i < 30; ++i)
    many.push_back(CurveSeries{
        "arm-" + std::to_string(i), {{0, 3.0 + i}, {10, 2.0 + i}}, false, i % 5, i / 5});
  const std::string svg = line_chart_svg(many, "loss", "step", "CE");
  const std::vector<double> height = attribute_values(svg, "svg", "height");
  ASSERT_EQ(height.size(), 1u);
  EXPECT_GT(height[0], 440.0);  // taller than the default, for 30 legend rows
  const std::vector<double> text_y = attribute_values(svg, "text", "y");
  ASSERT_FALSE(text_y.empty());
  for (double y : text_y) EXPECT_LE(y, height[0]);
  for (int i = 0; i < 30; ++i)
    EXPECT_NE(svg.find(">arm-" + std::to_string(i) + "<"), std::string::npos) << i;
  // A chart with few series keeps the default height.
  EXPECT_EQ(attribute_values(line_chart_svg({many[0]}, "loss", "step", "CE"), "svg", "height"),
            std::vector<double>{440.0});
}

TEST(Record, LineChartStylesKeepEightSeedGroupsOfOneColourApart) {
  std::vector<CurveSeries> groups;
  for (int g = 0; g < 8; ++g)
    groups.push_back(CurveSeries{"seed" + std::to_string(g), {{0, 1.0}, {1, 2.0}}, false, 0, g});
  const std::string svg = line_chart_svg(groups, "loss", "step", "CE");
  std::set<std::string> styles;  // the dash pattern of each polyline ("" for solid)
  const std::regex polyline("<polyline[^>]*?(?: stroke-dasharray=\"([^\"]*)\")? points=");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), polyline);
       it != std::sregex_iterator(); ++it)
    styles.insert((*it)[1].str());
  EXPECT_EQ(styles.size(), 8u);
}

TEST(Record, IntervalChartWrapsLabelsToTheirColumns) {
  const std::vector<std::string> labels = {"fp8-mlp blockwise", "bf16 null", "fp8-mlp tensorwise",
                                           "fp8-mlp rowwise", "fp8-mlp tensorwise bf16-wgrad"};
  std::vector<IntervalColumn> columns;
  for (const auto& l : labels)
    columns.push_back(IntervalColumn{l, {{"", 0.01}, {"seed2", -0.01}}, 0, -0.02, 0.02, true});
  const std::string svg = interval_chart_svg(columns, "ΔCE", "nats");
  // Five columns share the 600 px plot: about 16 characters a line at 7 px each.
  std::vector<std::string> lines;
  const std::regex tspan("<tspan[^>]*>([^<]*)</tspan>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tspan); it != std::sregex_iterator();
       ++it)
    lines.push_back((*it)[1].str());
  for (const auto& line : lines) EXPECT_LE(line.size(), 16u) << line;
  std::string joined;
  for (const auto& line : lines) joined += (joined.empty() ? "" : " ") + line;
  std::string expected;
  for (const auto& l : labels) expected += (expected.empty() ? "" : " ") + l;
  EXPECT_EQ(joined, expected);             // every word, in order, none lost
  EXPECT_GT(lines.size(), labels.size());  // the long labels took more than one line
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
