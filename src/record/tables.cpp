#include "fp8lab/error.hpp"
#include "record/record.hpp"

#include <cctype>

namespace fp8lab {

std::vector<double> ema_debiased(const std::vector<double>& values, double alpha) {
  FP8LAB_CHECK(alpha >= 0.0 && alpha < 1.0, "EMA alpha must be in [0, 1), got {}", alpha);
  std::vector<double> out;
  out.reserve(values.size());
  double ema = 0.0, weight = 1.0;
  for (double v : values) {
    ema = alpha * ema + (1.0 - alpha) * v;
    weight *= alpha;
    out.push_back(ema / (1.0 - weight));
  }
  return out;
}

static bool looks_numeric(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' || c == 'e' ||
          c == '%' || c == ',' || c == 'x' || c == ' ')) {
      return false;
    }
  }
  return std::isdigit(static_cast<unsigned char>(s.back())) || s.back() == '%' || s.back() == 'x';
}

std::string markdown_table(const std::vector<std::string>& header,
                           const std::vector<std::vector<std::string>>& rows) {
  for (const auto& row : rows) {
    FP8LAB_CHECK(row.size() == header.size(), "table row has {} cells, header has {}", row.size(),
                 header.size());
  }
  std::string out = "|";
  for (const auto& h : header) out += " " + h + " |";
  out += "\n|";
  for (std::size_t c = 0; c < header.size(); ++c) {
    bool numeric = !rows.empty();
    for (const auto& row : rows) numeric = numeric && (looks_numeric(row[c]) || row[c] == "—");
    out += numeric ? "---:|" : "---|";
  }
  out += "\n";
  for (const auto& row : rows) {
    out += "|";
    for (const auto& cell : row) out += " " + cell + " |";
    out += "\n";
  }
  return out;
}

double gpt_train_flops_per_token(std::int64_t layers, std::int64_t d_model, std::int64_t seq_len,
                                 std::int64_t vocab, std::int64_t mlp_hidden) {
  const double d = static_cast<double>(d_model);
  const double per_layer_params = 4.0 * d * d + 2.0 * d * static_cast<double>(mlp_hidden);
  const double matmul = 6.0 * static_cast<double>(layers) * per_layer_params;
  const double attention = 6.0 * static_cast<double>(layers) * static_cast<double>(seq_len) * d;
  const double head = 6.0 * d * static_cast<double>(vocab);
  return matmul + attention + head;
}

}  // namespace fp8lab
