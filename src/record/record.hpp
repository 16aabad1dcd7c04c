// Pieces of a run record: where the sources came from, loss curves as a picture, Markdown
// tables, and the FLOP estimate of a GPT training run. Kept free of model types so the study,
// the benchmarks and the trainer can all use them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace fp8lab {

// The git commit of the tree at `repo` and whether tracked files differ from it. When git or the
// repository is unavailable, commit is "unknown" and dirty is true (we cannot vouch for it).
// FP8LAB_SOURCE_COMMIT ("<sha>" or "<sha> dirty"), when set, is taken instead: a carried binary's
// build commit (scripts/gpu-pack writes it, scripts/gpu-session exports it).
struct SourceInfo {
  std::string commit = "unknown";
  bool dirty = true;
};
SourceInfo git_source_info(const std::filesystem::path& repo);

// Exponential moving average with bias correction (as Adam does), so early points are not
// dragged towards zero: ema_t = a·ema_{t-1} + (1-a)·x_t, reported as ema_t / (1 - a^t).
std::vector<double> ema_debiased(const std::vector<double>& values, double alpha);

struct CurveSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
  bool dashed = false;
  int colour = -1;  // palette index; -1 takes the next unused colour (raw + EMA of one arm share one)
  int dash = -1;    // dash pattern index (solid, dashed, dotted, dash-dot, ...); -1: by `dashed`
  bool markers = false;  // points as small circles without a line (e.g. validation losses)
  // An empty name draws the series without a legend row.
};

struct ChartOptions {
  // Only points with x >= x_from are drawn, and the axes fit them: a zoomed panel.
  double x_from = -1e300;
};

// A self-contained SVG line chart (axes, ticks, legend). Series with no points are skipped;
// non-finite y values break the line rather than wreck the scale.
std::string line_chart_svg(const std::vector<CurveSeries>& series, const std::string& title,
                           const std::string& x_label, const std::string& y_label,
                           const ChartOptions& options = {});

// One column per group of values: every value a dot, the mean a bar, and its interval a
// whisker (lo, hi); a dashed line at y = 0. For ΔCE per seed pair and recipe.
struct IntervalColumn {
  std::string label;
  std::vector<std::pair<std::string, double>> values;  // (name, value), e.g. (seed group, ΔCE)
  double mean = 0, lo = 0, hi = 0;
  bool has_interval = false;
};
std::string interval_chart_svg(const std::vector<IntervalColumn>& columns, const std::string& title,
                               const std::string& y_label);

// A GitHub-flavoured Markdown table; numeric-looking cells are right-aligned.
std::string markdown_table(const std::vector<std::string>& header,
                           const std::vector<std::vector<std::string>>& rows);

// Training FLOPs of a decoder-only transformer per token: 6·N_nonembedding for the matmuls of
// forward + backward, plus 6·L·T·d for attention scores and values (causal: half of 12·L·T·d),
// plus 6·d·V for the tied LM head. Returns FLOPs per token.
double gpt_train_flops_per_token(std::int64_t layers, std::int64_t d_model, std::int64_t seq_len,
                                 std::int64_t vocab, std::int64_t mlp_hidden);

}  // namespace fp8lab
