// Run logging pieces of the trainer (see run_log.hpp).
#include "train/run_log.hpp"

#include "fp8lab/checkpoint.hpp"  // write_file_atomic
#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <vector>

namespace fp8lab {

void append_metrics(const std::filesystem::path& file, const StepRecord& r, std::int64_t skipped) {
  nlohmann::json j{{"step", r.step},
                   {"loss", r.loss},
                   {"lr", r.lr},
                   {"grad_norm", r.grad_norm},  // NaN (skipped step) is written as null
                   {"tokens_per_s", r.tokens_per_s},
                   {"peak_mib", r.peak_mib},
                   {"skipped_steps", skipped}};
  if (r.val_loss) j["val_loss"] = *r.val_loss;
  std::ofstream out(file, std::ios::app);
  FP8LAB_CHECK_KIND(ErrorKind::io, out.good(), "cannot append to '{}'", file.string());
  out << j.dump() << '\n';
  out.flush();
}

void truncate_metrics(const std::filesystem::path& file, std::int64_t step) {
  std::vector<std::string> keep;
  {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
      // A torn last line (a kill mid-write) or a hand-edited one is simply dropped.
      const auto j = try_parse_json(line);
      if (j && j->is_object() && j->contains("step") && (*j)["step"].is_number_integer() &&
          (*j)["step"].get<std::int64_t>() <= step) {
        keep.push_back(line);
      }
    }
  }
  // Replaced in one rename: a kill while rewriting in place could leave the file empty, and the
  // resumed run would then lose every step before its checkpoint.
  std::string text;
  for (const std::string& line : keep) text += line + '\n';
  write_file_atomic(file, text.data(), text.size());
}

std::string format_step_line(const StepRecord& r, std::int64_t total, double eta_seconds) {
  const int width = static_cast<int>(std::to_string(total).size());
  std::string line = fmt::format(
      "step {:>{}}/{} | loss {:.4f} | lr {:.2e} | gnorm {:.3f} | {:.0f} tok/s | "
      "peak {:.1f} MiB",
      r.step, width, total, r.loss, r.lr, r.grad_norm, r.tokens_per_s, r.peak_mib);
  if (r.val_loss) line += fmt::format(" | val {:.4f}", *r.val_loss);
  if (r.skipped) line += " | SKIPPED (non-finite)";
  if (r.step < total && std::isfinite(eta_seconds))
    line += " | eta " + format_duration(eta_seconds);
  return line;
}

void ProgressBar::draw(std::int64_t step, std::int64_t total, double loss, double eta) {
  if (!enabled_ || total <= 0) return;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * step / total);
  std::fprintf(stderr, "\r\033[K[%s%s] %lld/%lld loss %.4f ETA %s",
               std::string(static_cast<std::size_t>(filled), '#').c_str(),
               std::string(static_cast<std::size_t>(kWidth - filled), '.').c_str(),
               static_cast<long long>(step), static_cast<long long>(total), loss,
               format_duration(eta).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace fp8lab
