// A small, dependency-free SVG line chart for loss curves in study records.
#include "record/record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace fp8lab {
namespace {

constexpr double kWidth = 900, kHeight = 440;
constexpr double kLeft = 70, kRight = 230, kTop = 40, kBottom = 55;  // plot margins (legend right)
const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                "#9467bd", "#8c564b", "#e377c2", "#17becf"};
// Line styles, so arms stay apart in grey print and where colours repeat: a study's arms take
// their colour from the variant and their style from the seed group, so eight styles keep eight
// seed groups of one variant apart.
const char* const kDashes[] = {"",     "6,3", "2,2",         "8,3,2,3",
                               "12,4", "2,5", "8,2,2,2,2,2", "4,4,1,4"};
constexpr int kDashCount = static_cast<int>(std::size(kDashes));
constexpr double kLegendRow = 18;  // px between legend rows
constexpr double kCharWidth = 7;   // px, about, of one character at font-size 12

std::string escape_xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// "Nice" tick step (1, 2 or 5 times a power of ten) giving about `target` ticks over span.
double tick_step(double span, int target) {
  if (!(span > 0)) return 1;
  const double raw = span / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  return (norm < 1.5 ? 1 : norm < 3.5 ? 2 : norm < 7.5 ? 5 : 10) * mag;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  void pad_if_flat() {
    if (!(hi > lo)) {
      lo -= 0.5;
      hi += 0.5;
    }
  }
};

// The document, its white background and the title above the plot.
std::string svg_open(const std::string& title, double height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">{3}</text>\n",
      kWidth, height, kLeft + (kWidth - kLeft - kRight) / 2, escape_xml(title));
}

// The chart's height: the default, or taller so that a legend of `rows` rows beside the plot
// fits whole (a study of many arms lists them all).
double height_for_legend(std::size_t rows) {
  return std::max(kHeight, kTop + 10 + kLegendRow * static_cast<double>(rows) + 10);
}

// A label cut at spaces into lines of at most `max_chars` characters (a word longer than that
// keeps a line of its own), so that labels of neighbouring columns do not run into each other.
std::vector<std::string> wrap_words(const std::string& label, std::size_t max_chars) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < label.size()) {
    std::size_t end = label.find(' ', start);
    if (end == std::string::npos) end = label.size();
    const std::string word = label.substr(start, end - start);
    if (!lines.empty() && lines.back().size() + 1 + word.size() <= max_chars)
      lines.back() += " " + word;
    else if (!word.empty())
      lines.push_back(word);
    start = end + 1;
  }
  return lines;
}

}  // namespace

std::string line_chart_svg(const std::vector<CurveSeries>& series, const std::string& title,
                           const std::string& x_label, const std::string& y_label,
                           const ChartOptions& options) {
  Range xr, yr;
  for (const auto& s : series) {
    for (auto [x, y] : s.points) {
      if (std::isfinite(y) && x >= options.x_from) {
        xr.add(x);
        yr.add(y);
      }
    }
  }
  if (!std::isfinite(xr.lo)) xr = Range{0, 1}, yr = Range{0, 1};
  xr.pad_if_flat();
  yr.pad_if_flat();
  const auto legend_rows = static_cast<std::size_t>(
      std::count_if(series.begin(), series.end(),
                    [](const CurveSeries& s) { return !s.points.empty() && !s.name.empty(); }));
  const double height = height_for_legend(legend_rows);
  const double pw = kWidth - kLeft - kRight, ph = height - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (x - xr.lo) / (xr.hi - xr.lo) * pw; };
  auto py = [&](double y) { return kTop + (yr.hi - y) / (yr.hi - yr.lo) * ph; };

  std::string svg = svg_open(title, height);
  // Grid and ticks.
  for (int axis = 0; axis < 2; ++axis) {
    const Range& r = axis == 0 ? xr : yr;
    const double step = tick_step(r.hi - r.lo, axis == 0 ? 8 : 6);
    for (double t = std::ceil(r.lo / step) * step; t <= r.hi + step * 1e-9; t += step) {
      const std::string label = fmt::format("{:g}", std::abs(t) < step * 1e-9 ? 0.0 : t);
      if (axis == 0) {
        svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
                           "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                           px(t), kTop, kTop + ph, kTop + ph + 16, label);
      } else {
        svg += fmt::format("<line x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\" stroke=\"#ddd\"/>"
                           "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
                           py(t), kLeft, kLeft + pw, kLeft - 6, py(t) + 4, label);
      }
    }
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n",
                     kLeft, kTop, pw, ph);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + pw / 2,
                     height - 12, escape_xml(x_label));
  svg += fmt::format("<text transform=\"translate(16,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                     kTop + ph / 2, escape_xml(y_label));
  // Lines: a non-finite y ends the current polyline.
  int index = 0, legend_row = 0;
  for (const auto& s : series) {
    if (s.points.empty()) continue;
    const char* colour = kPalette[(s.colour >= 0 ? s.colour : index++) % 8];
    const int pattern = s.dash >= 0 ? s.dash % kDashCount : s.dashed ? 1 : 0;
    const std::string dash = kDashes[pattern][0] == '\0'
                                 ? ""
                                 : fmt::format(" stroke-dasharray=\"{}\"", kDashes[pattern]);
    std::string pts;
    auto flush = [&] {
      if (!pts.empty()) {
        svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"{} points=\"{}\"/>\n",
                           colour, dash, pts);
      }
      pts.clear();
    };
    for (auto [x, y] : s.points) {
      if (x < options.x_from) continue;
      if (!std::isfinite(y)) {
        flush();
        continue;
      }
      if (s.markers)
        svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"none\" "
                           "stroke=\"{}\" stroke-width=\"1.5\"/>\n",
                           px(x), py(y), colour);
      else
        pts += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    }
    flush();
    if (s.name.empty()) continue;  // drawn, not listed (e.g. an arm's validation points)
    const double ly = kTop + 10 + kLegendRow * legend_row++;
    if (s.markers) {
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"none\" stroke=\"{}\"/>"
                         "<text x=\"{}\" y=\"{}\">{}</text>\n",
                         kLeft + pw + 22, ly, colour, kLeft + pw + 40, ly + 4, escape_xml(s.name));
      continue;
    }
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>"
                       "<text x=\"{5}\" y=\"{6}\">{7}</text>\n",
                       kLeft + pw + 10, ly, kLeft + pw + 34, colour, dash, kLeft + pw + 40, ly + 4,
                       escape_xml(s.name));
  }
  return svg + "</svg>\n";
}

std::string interval_chart_svg(const std::vector<IntervalColumn>& columns, const std::string& title,
                               const std::string& y_label) {
  Range yr;
  yr.add(0.0);
  for (const auto& c : columns) {
    for (const auto& v : c.values) yr.add(v.second);
    if (c.has_interval) {
      yr.add(c.lo);
      yr.add(c.hi);
    }
  }
  yr.pad_if_flat();
  const double margin = (yr.hi - yr.lo) * 0.05;
  yr.lo -= margin;
  yr.hi += margin;
  std::vector<std::string> names;  // a colour per value name (seed group), in order of appearance
  for (const auto& c : columns)
    for (const auto& v : c.values)
      if (std::find(names.begin(), names.end(), v.first) == names.end()) names.push_back(v.first);
  const double height = height_for_legend(names.size() + 1);  // + the line saying what bars are
  const double pw = kWidth - kLeft - kRight, ph = height - kTop - kBottom;
  const double slot = pw / static_cast<double>(std::max<std::size_t>(columns.size(), 1));
  auto py = [&](double y) { return kTop + (yr.hi - y) / (yr.hi - yr.lo) * ph; };
  std::string svg = svg_open(title, height);
  const double step = tick_step(yr.hi - yr.lo, 6);
  for (double t = std::ceil(yr.lo / step) * step; t <= yr.hi + step * 1e-9; t += step)
    svg += fmt::format("<line x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>\n",
                       py(t), kLeft, kLeft + pw, kLeft - 6, py(t) + 4,
                       std::abs(t) < step * 1e-9 ? 0.0 : t);
  svg += fmt::format("<line x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\" stroke=\"#333\" "
                     "stroke-dasharray=\"4,3\"/>\n",
                     py(0.0), kLeft, kLeft + pw);
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n",
                     kLeft, kTop, pw, ph);
  svg += fmt::format(
      "<text transform=\"translate(16,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      kTop + ph / 2, escape_xml(y_label));
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const IntervalColumn& c = columns[i];
    const double cx = kLeft + slot * (static_cast<double>(i) + 0.5);
    if (c.has_interval)
      svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\"/>"
                         "<line x1=\"{3:.1f}\" y1=\"{1:.1f}\" x2=\"{4:.1f}\" y2=\"{1:.1f}\" stroke=\"#333\"/>"
                         "<line x1=\"{3:.1f}\" y1=\"{2:.1f}\" x2=\"{4:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\"/>\n",
                         cx, py(c.lo), py(c.hi), cx - 8, cx + 8);
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{2:.1f}\" x2=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\" "
                       "stroke-width=\"3\"/>\n",
                       cx - 16, cx + 16, py(c.mean));
    for (std::size_t k = 0; k < c.values.size(); ++k) {
      const auto& [name, v] = c.values[k];
      const auto it = std::find(names.begin(), names.end(), name);
      const char* colour = kPalette[static_cast<std::size_t>(it - names.begin()) % 8];
      const double dx = (static_cast<double>(k) - (static_cast<double>(c.values.size()) - 1) / 2) * 7;
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>\n", cx + dx,
                         py(v), colour);
    }
    // The label under its column, in as many lines as the column's width needs.
    const auto max_chars = static_cast<std::size_t>(std::max(1.0, (slot - 8) / kCharWidth));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">", cx, kTop + ph + 16);
    const std::vector<std::string> lines = wrap_words(c.label, max_chars);
    for (std::size_t l = 0; l < lines.size(); ++l)
      svg += fmt::format("<tspan x=\"{:.1f}\" dy=\"{}\">{}</tspan>", cx, l ? 14 : 0,
                         escape_xml(lines[l]));
    svg += "</text>\n";
  }
  for (std::size_t i = 0; i < names.size(); ++i)
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/><text x=\"{}\" "
        "y=\"{:.1f}\">{}</text>\n",
        kLeft + pw + 22, kTop + 10 + kLegendRow * static_cast<double>(i), kPalette[i % 8],
        kLeft + pw + 40, kTop + 14 + kLegendRow * static_cast<double>(i),
        escape_xml(names[i].empty() ? "(first seed)" : names[i]));
  svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\">bar: mean, whisker: 95%</text>\n",
                     kLeft + pw + 10, kTop + 24 + kLegendRow * static_cast<double>(names.size()));
  return svg + "</svg>\n";
}

}  // namespace fp8lab
