#include "fp8lab/evaluate.hpp"

#include "fp8lab/backend.hpp"
#include "fp8lab/checkpoint.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"
#include "data/loader.hpp"
#include "fp8lab/model.hpp"

#include <algorithm>
#include <utility>
#include <vector>


namespace fp8lab {
namespace fs = std::filesystem;

fs::path resolve_checkpoint_dir(const fs::path& where) {
  FP8LAB_CHECK_KIND(ErrorKind::io, fs::exists(where), "checkpoint path '{}' does not exist", where.string());
  if (fs::exists(where / "meta.json")) return where;
  for (const fs::path& dir : {where, where / "checkpoints"}) {
    if (auto latest = latest_checkpoint(dir)) return *latest;
  }
  FP8LAB_FAIL(ErrorKind::io, "'{}' is neither a checkpoint (no meta.json) nor a run or checkpoints "
              "directory with a 'latest' checkpoint", where.string());
}

static std::optional<std::int32_t> excluded_token_for(const std::string& spec, std::int64_t vocab) {
  if (spec == "none") return std::nullopt;
  if (spec == "auto") {
    if (vocab > eval::kGpt2EndOfText) return eval::kGpt2EndOfText;
    return std::nullopt;
  }
  std::int64_t id = -1;
  try {
    std::size_t used = 0;
    id = std::stoll(spec, &used);
    FP8LAB_CHECK(used == spec.size(), "trailing characters");
  } catch (const std::exception&) {
    FP8LAB_FAIL(ErrorKind::invalid_argument, "--exclude-token must be auto, none or a token id, got '{}'", spec);
  }
  FP8LAB_CHECK(id >= 0 && id < vocab, "--exclude-token {} is outside the vocabulary [0, {})", id, vocab);
  return static_cast<std::int32_t>(id);
}

namespace {

// The last `k` checkpoints beside `latest` (of step `last_step`) with a step no later than its,
// oldest first.
std::vector<std::pair<std::int64_t, fs::path>> last_checkpoints(const fs::path& latest,
                                                                std::int64_t last_step,
                                                                std::int64_t k) {
  std::vector<std::pair<std::int64_t, fs::path>> found;
  for (auto& [step, dir] : list_checkpoint_dirs(latest.parent_path()))
    if (step <= last_step && fs::exists(dir / "meta.json")) found.emplace_back(step, std::move(dir));
  FP8LAB_CHECK(static_cast<std::int64_t>(found.size()) >= k,
               "--average-last {}: '{}' holds {} checkpoint(s) up to step {}; train with "
               "train.keep_checkpoints >= {} (and a checkpoint_every that makes them)",
               k, latest.parent_path().string(), found.size(), last_step, k);
  found.erase(found.begin(), found.end() - k);
  return found;
}

// Loads each checkpoint into `model` and leaves the mean of their weights there (summed in
// double, oldest first, then rounded once to f32).
std::vector<std::int64_t> load_mean_of(const std::vector<std::pair<std::int64_t, fs::path>>& ckpts,
                                       GptModel& model) {
  std::vector<double> sum(static_cast<std::size_t>(model.parameter_count()), 0.0);
  std::vector<std::int64_t> steps;
  for (const auto& [step, dir] : ckpts) {
    load_checkpoint(dir, model, nullptr);
    const std::vector<float> w = model.get_parameters();
    for (std::size_t i = 0; i < w.size(); ++i) sum[i] += w[i];
    steps.push_back(step);
  }
  std::vector<float> mean(sum.size());
  for (std::size_t i = 0; i < sum.size(); ++i)
    mean[i] = static_cast<float>(sum[i] / static_cast<double>(ckpts.size()));
  model.set_parameters(mean);
  return steps;
}

}  // namespace

EvalReport evaluate_checkpoint(const EvalOptions& o) {
  const fs::path dir = resolve_checkpoint_dir(o.checkpoint);
  const CheckpointMeta meta = read_checkpoint_meta(dir);
  const ModelConfig& mc = meta.config.model;

  PrecisionConfig precision;
  precision.policy = parse_policy(o.policy);
  precision.fp8 = meta.config.precision.fp8;  // score with the recipe it was trained with...
  precision.fp8.bf16_wgrad = false;           // (no backward here)
  if (!o.fp8_recipe.empty()) precision.fp8.recipe = parse_fp8_recipe(o.fp8_recipe);  // ...or this
  if (precision.policy == PrecisionPolicy::bf16) precision.fp8 = {};
  const std::int64_t rows = o.batch_rows > 0 ? o.batch_rows : meta.config.train.micro_batch;
  FP8LAB_CHECK(o.order == "sequential" || o.order == "shuffled",
               "--order must be sequential or shuffled, got '{}'", o.order);
  FP8LAB_CHECK(o.average_last >= 1, "--average-last must be >= 1, got {}", o.average_last);
  const auto averaged = o.average_last > 1
                            ? last_checkpoints(dir, meta.step, o.average_last)
                            : std::vector<std::pair<std::int64_t, fs::path>>{};

  // Everything meta.json says is checked before anything is allocated from it: the model must
  // fit the weights file beside it, and a batch's tokens the int32 indexing.
  check_weights_fit_file(dir, mc);
  FP8LAB_CHECK(rows <= ((std::int64_t{1} << 31) - 1) / mc.seq_len,
               "--batch {} rows of {} tokens exceed 2^31 tokens per batch", rows, mc.seq_len);
  data::LoaderConfig lc;
  lc.shards = data::list_shards(o.data, o.split);
  lc.byte_length_table = data::byte_lengths_for_shards(lc.shards, mc.vocab_size);

  auto backend = make_backend(o.backend);
  GptModel model(mc, precision, rows, *backend);
  std::vector<std::int64_t> averaged_steps{meta.step};
  if (averaged.empty()) {
    load_checkpoint(dir, model, nullptr);
  } else {
    for (const auto& one : averaged) check_weights_fit_file(one.second, mc);
    averaged_steps = load_mean_of(averaged, model);
  }

  lc.batch_rows = rows;
  lc.seq_len = mc.seq_len;
  lc.seed = o.seed;
  lc.order = o.order == "sequential" ? data::LoaderConfig::Order::sequential : data::LoaderConfig::Order::shuffled;
  lc.repeat = false;
  lc.vocab_size = static_cast<std::int32_t>(mc.vocab_size);
  data::TokenLoader loader(std::move(lc));

  EvalReport report;
  report.excluded_token = excluded_token_for(o.exclude_token, mc.vocab_size);
  // Padding rows and excluded targets share one ignore value, so the model skips both.
  const std::int32_t ignore = report.excluded_token.value_or(-1);
  eval::EvalAccumulator acc(report.excluded_token);
  const std::int64_t total_batches = o.max_batches > 0
      ? std::min(o.max_batches, loader.batches_per_epoch()) : loader.batches_per_epoch();

  const std::size_t m = static_cast<std::size_t>(rows * mc.seq_len);
  std::vector<std::int32_t> inputs(m), targets(m);
  data::Batch batch;
  while ((o.max_batches <= 0 || report.batches < o.max_batches) && loader.next(batch)) {
    const std::size_t used = static_cast<std::size_t>(batch.rows * mc.seq_len);
    std::copy(batch.inputs.begin(), batch.inputs.end(), inputs.begin());
    std::copy(batch.targets.begin(), batch.targets.end(), targets.begin());
    std::fill(inputs.begin() + static_cast<std::ptrdiff_t>(used), inputs.end(), 0);
    std::fill(targets.begin() + static_cast<std::ptrdiff_t>(used), targets.end(), ignore);
    const LossSums s = model.evaluate(inputs.data(), targets.data(), ignore,
                                      static_cast<int>(meta.config.train.loss_chunk_rows));
    acc.add_batch_sum(s.loss_sum, batch.targets, batch.target_bytes);
    ++report.batches;
    report.rows += batch.rows;
    if (o.progress) {
      std::fprintf(stderr, "\reval: batch %lld/%lld", static_cast<long long>(report.batches),
                   static_cast<long long>(total_batches));
    }
  }
  if (o.progress) std::fprintf(stderr, "\n");
  FP8LAB_CHECK(report.batches > 0, "the {} split at '{}' yields no full row of {} tokens", o.split,
               o.data.string(), mc.seq_len + 1);
  report.metrics = acc.result();
  report.checkpoint_dir = dir.string();
  report.params_sha256 = model.parameter_sha256();
  report.policy = o.policy;
  report.fp8_recipe = fp8_recipe_name(precision.fp8.recipe);
  report.step = meta.step;
  report.averaged_steps = averaged_steps;
  report.batch_rows = rows;
  report.seq_len = mc.seq_len;
  report.order = o.order;
  return report;
}

nlohmann::json EvalReport::to_json() const {
  nlohmann::json j = parse_json(metrics.to_json(), "eval metrics");
  j["checkpoint"] = checkpoint_dir;
  j["params_sha256"] = params_sha256;
  j["policy"] = policy;
  j["fp8_recipe"] = fp8_recipe;
  j["step"] = step;
  j["averaged_steps"] = averaged_steps;
  j["batch_rows"] = batch_rows;
  j["seq_len"] = seq_len;
  j["batches"] = batches;
  j["rows"] = rows;
  j["packing"] = "rows of seq_len+1 consecutive tokens, overlapping by one; short last batch padded with ignored targets";
  j["order"] = order;
  j["excluded_token"] = excluded_token ? nlohmann::json(*excluded_token) : nlohmann::json(nullptr);
  return j;
}

}  // namespace fp8lab
