// The training loop (see fp8lab/trainer.hpp).
#include "fp8lab/trainer.hpp"

#include "fp8lab/distributed.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"
#include "fp8lab/output_dir.hpp"
#include "record/record.hpp"
#include "train/grad_buckets.hpp"
#include "train/resume_check.hpp"
#include "train/run_log.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <fstream>

namespace fp8lab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

void write_json_atomic(const fs::path& path, const json& j) {
  const std::string text = j.dump(2) + "\n";
  write_file_atomic(path, text.data(), text.size());
}

// A run directory written before fp8lab marked its output directories: its run.json says so.
bool run_of_older_fp8lab(const fs::path& dir) {
  try {
    const json record = read_json_file(dir / "run.json");
    return record.is_object() && record.contains("fp8lab_version");
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

Trainer::Trainer(RunConfig config, fs::path run_dir, Backend& backend, TrainerOptions options)
    : config_(std::move(config)),
      run_dir_(std::move(run_dir)),
      backend_(backend),
      options_(options) {
  config_.validate();
  // "auto" (the default) is the backend handed in; the run records its name.
  if (config_.backend == "auto") config_.backend = backend.name();
  FP8LAB_CHECK(config_.backend == backend.name(), "config asks for backend '{}' but runs on '{}'",
               config_.backend, backend.name());
  if (options_.comm != nullptr) {
    comm_ = options_.comm;
    rank_ = comm_->rank();
    world_ = comm_->world_size();
  }
  FP8LAB_CHECK(config_.train.grad_accum % world_ == 0,
               "data parallelism over {} ranks needs train.grad_accum divisible by {} (micro_batch "
               "x grad_accum is the global batch; each rank runs grad_accum / world micro-batches), "
               "got grad_accum {}",
               world_, world_, config_.train.grad_accum);
  if (!writer()) {  // one rank speaks for all
    options_.log = nullptr;
    options_.progress_bar = false;
  }
  if (writer()) {
    ClaimOptions claim;
    claim.force = options_.force;
    claim.written_by_older_fp8lab = run_of_older_fp8lab;
    run_dir_lock_ = std::make_unique<OutputDirectory>(run_dir_, "run", claim);
    fs::create_directories(run_dir_ / "checkpoints");
  }
  if (!options_.resume) {
    FP8LAB_CHECK(!latest_checkpoint(run_dir_ / "checkpoints"),
                 "run directory '{}' already holds checkpoints: pass --resume to continue it, or "
                 "choose another --out",
                 run_dir_.string());
  }
  model_ = std::make_unique<GptModel>(config_.model, config_.precision, config_.train.micro_batch,
                                      backend_);
  optimizer_ = std::make_unique<AdamW>(config_.optim, *model_,
                                       shard_of(model_->parameter_count(), rank_, world_));
  if (distributed() && options_.overlap_grad_reduce) {
    FP8LAB_CHECK(options_.grad_bucket_elements >= 0, "grad_bucket_elements {} is negative",
                 options_.grad_bucket_elements);
    grad_reduce_ = std::make_unique<OverlappedGradReduce>(
        *comm_, backend_, model_->grads(),
        plan_gradient_buckets(model_->gradient_ready_points(), model_->parameter_count(),
                              options_.grad_bucket_elements));
    model_->set_gradient_ready_hook(
        [r = grad_reduce_.get()](std::int64_t begin, std::int64_t) { r->on_ready(begin); });
  }
  train_data_ = make_token_source(config_, "train");
  if (config_.train.eval_every > 0) val_data_ = make_token_source(config_, "val");
  started_utc_ = utc_now_iso8601();
  if (options_.resume) {
    resume_from_checkpoint();
  } else {
    model_->init_parameters(config_.train.seed);
    if (distributed()) {
      // The initialisation is deterministic, so this changes nothing; it makes "every rank
      // starts from rank 0's weights" a guarantee rather than an assumption.
      backend_.synchronize();
      comm_->broadcast(model_->master(), 0);
      model_->refresh_working_weights();
    }
    init_sha256_ = model_->parameter_sha256();
    if (writer()) std::ofstream(run_dir_ / "metrics.jsonl", std::ios::trunc);
  }
  if (writer()) write_json_atomic(run_dir_ / "config.json", to_json(config_));
  write_run_record("running", nullptr);
  if (options_.log) {
    std::string memory_options;
    for (const MemoryOption& m : kMemoryOptions)
      if (config_.precision.*m.on) memory_options += " + " + std::string(m.label);
    std::fprintf(options_.log,
                 "fp8lab train: preset %s, %lld parameters, policy %s%s, compute %s%s, backend "
                 "%s\ninit_sha256 %s\n",
                 config_.preset.c_str(), static_cast<long long>(model_->parameter_count()),
                 policy_name(config_.precision.policy), memory_options.c_str(),
                 compute_mode_name(config_.precision.compute),
                 config_.precision.grads == DType::bf16 ? ", bf16 gradients" : "",
                 backend_.name().c_str(), init_sha256_.c_str());
  }
}

Trainer::~Trainer() = default;

void Trainer::resume_from_checkpoint() {
  const auto latest = latest_checkpoint(run_dir_ / "checkpoints");
  FP8LAB_CHECK_KIND(ErrorKind::io, latest.has_value(), "--resume: no checkpoint in '{}'",
                    (run_dir_ / "checkpoints").string());
  // The config first, before any weight is read: every differing key is named at once.
  check_resume_config(read_checkpoint_meta(*latest).config, config_, latest->string());
  const CheckpointMeta meta = load_checkpoint(*latest, *model_, optimizer_.get());
  FP8LAB_CHECK_KIND(
      ErrorKind::format,
      meta.init_seed == config_.train.seed && meta.data_seed == config_.train.data_seed,
      "--resume: checkpoint '{}' records seeds {} and {} but its config {} and {}: "
      "the metadata was edited",
      latest->string(), meta.init_seed, meta.data_seed, config_.train.seed,
      config_.train.data_seed);
  train_data_->seek(meta.data_position);
  const auto expected_batches =
      static_cast<std::uint64_t>(meta.step) * static_cast<std::uint64_t>(config_.train.grad_accum);
  FP8LAB_CHECK_KIND(ErrorKind::format, train_data_->batches_served() == expected_batches,
                    "--resume: checkpoint '{}' is at step {}, which takes {} batches of data, but "
                    "its data position has served {}: the metadata was edited",
                    latest->string(), meta.step, expected_batches, train_data_->batches_served());
  step_ = meta.step;
  skipped_ = meta.skipped_steps;
  init_sha256_ = meta.init_sha256;
  if (writer()) truncate_metrics(run_dir_ / "metrics.jsonl", step_);
  if (options_.log) {
    std::fprintf(options_.log, "resumed from %s at step %lld\n", latest->string().c_str(),
                 static_cast<long long>(step_));
  }
}

[[noreturn]] void Trainer::abort_non_finite(const std::string& what) {
  FP8LAB_FAIL(ErrorKind::non_finite,
              "step {}: non-finite {} (train.nonfinite=abort; set it to skip to skip such steps)",
              step_ + 1, what);
}

StepRecord Trainer::train_step() {
  const auto start = Clock::now();
  StepRecord r;
  r.lr = learning_rate(config_.optim, config_.train.steps, step_);
  const std::int64_t accum = config_.train.grad_accum;
  const std::int64_t m = config_.train.micro_batch * config_.model.seq_len;
  const int ignore = static_cast<int>(config_.train.ignore_index);
  std::vector<std::int32_t> inputs(static_cast<std::size_t>(m * accum)), targets(inputs.size());
  for (std::int64_t a = 0; a < accum; ++a) train_data_->next(&inputs[a * m], &targets[a * m]);
  std::int64_t counted = 0;
  for (std::int32_t t : targets) counted += t != ignore;
  FP8LAB_CHECK(counted > 0, "step {}: every target equals ignore_index {}", step_ + 1, ignore);
  std::string bad;  // what went non-finite, if anything
  double loss_sum = 0;
  model_->zero_grads();
  const std::int64_t my_last = accum - world_ + rank_;  // this rank's last micro-batch
  try {
    for (std::int64_t a = 0; a < accum; ++a) {
      if (a % world_ != rank_) continue;  // another rank's micro-batch
      // Only the last backward's gradients are final: its hook calls start the buckets.
      if (grad_reduce_ && a == my_last) grad_reduce_->arm();
      loss_sum +=
          model_
              ->forward_backward(&inputs[a * m], &targets[a * m], 1.f / static_cast<float>(counted),
                                 ignore, static_cast<int>(config_.train.loss_chunk_rows))
              .loss_sum;
    }
    // A device-side error of the last backward (an FP8 cast that saw inf/NaN) surfaces at a
    // synchronisation: here, where it is caught and agreed on like the others.
    if (distributed()) backend_.synchronize();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::non_finite) throw;
    bad = e.message();
  }
  if (grad_reduce_) {
    // Buckets a failed backward did not reach start now (every rank starts the same ones), and
    // all of them complete before any other collective (the agreement below is one).
    grad_reduce_->finish();
  }
  if (distributed()) {
    // Every rank must take the same branch below: agree on the loss and on any failure first.
    std::vector<double> sums{loss_sum, bad.empty() ? 0.0 : 1.0};
    comm_->all_reduce_sum_host(sums);
    loss_sum = sums[0];
    if (bad.empty() && sums[1] > 0)
      bad = fmt::format("values on {} other rank(s) (their errors name them)", sums[1]);
  }
  r.loss = loss_sum / static_cast<double>(counted);
  if (bad.empty() && !std::isfinite(r.loss)) bad = "loss";
  if (bad.empty()) {
    if (distributed() && !grad_reduce_) {
      // Each rank's gradient is its share of the global mean (grad_scale = 1 / global count):
      // their sum is the gradient of the global batch.
      backend_.synchronize();
      comm_->all_reduce_sum(model_->grads());
    }
    // One reduction over the whole gradient buffer (one device sync); only when it is not finite
    // are the tensors scanned one by one, to name the first bad one.
    const double total = backend_.sum_of_squares(model_->grads());
    if (!std::isfinite(total)) {
      const std::vector<double> sums = gradient_sums_of_squares(*model_);
      for (std::size_t i = 0; i < sums.size() && bad.empty(); ++i) {
        if (!std::isfinite(sums[i]))
          bad = "gradient of tensor '" + model_->layout().params()[i].name + "'";
      }
      if (bad.empty()) bad = "gradient norm (the sum of squares overflowed)";
    }
    r.grad_norm = std::sqrt(total);
  }
  if (!bad.empty()) {
    if (config_.train.nonfinite == "abort") abort_non_finite(bad);
    ++skipped_;
    r.skipped = true;
    r.grad_norm = std::nan("");
    if (options_.log)
      std::fprintf(options_.log, "step %lld: skipped, non-finite %s\n",
                   static_cast<long long>(step_ + 1), bad.c_str());
  } else {
    // The clip is folded into the update: AdamW scales each gradient as it reads it.
    const float clip = config_.optim.clip_grad_norm;
    const float grad_scale =
        clip > 0.f && r.grad_norm > clip ? static_cast<float>(clip / (r.grad_norm + 1e-6)) : 1.f;
    optimizer_->step(r.lr, grad_scale);
    if (distributed()) {  // ZeRO-1: each rank updated its shard; everyone gets everyone's
      backend_.synchronize();
      comm_->all_gather(model_->master());
    }
    if (distributed() || !optimizer_->writes_working_copy()) model_->refresh_working_weights();
  }
  backend_.synchronize();
  ++step_;
  r.step = step_;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.tokens_per_s = static_cast<double>(m * accum) / std::max(seconds, 1e-9);
  r.peak_mib = static_cast<double>(backend_.memory_stats().peak_bytes) / (1024.0 * 1024.0);
  return r;
}

double Trainer::validation_loss() {
  if (!val_data_) val_data_ = make_token_source(config_, "val");
  val_data_->rewind();  // the same batches every time, so evaluations are comparable
  const std::int64_t m = config_.train.micro_batch * config_.model.seq_len;
  std::vector<std::int32_t> inputs(static_cast<std::size_t>(m)), targets(inputs.size());
  double loss = 0;
  std::int64_t counted = 0;
  for (std::int64_t b = 0; b < std::max<std::int64_t>(1, config_.train.eval_batches); ++b) {
    val_data_->next(inputs.data(), targets.data());
    if (b % world_ != rank_) continue;  // another rank's batch
    const LossSums s = model_->evaluate(inputs.data(), targets.data(),
                                        static_cast<int>(config_.train.ignore_index),
                                        static_cast<int>(config_.train.loss_chunk_rows));
    loss += s.loss_sum;
    counted += s.counted;
  }
  if (distributed()) {
    std::vector<double> sums{loss, static_cast<double>(counted)};
    comm_->all_reduce_sum_host(sums);
    loss = sums[0];
    counted = static_cast<std::int64_t>(sums[1]);
  }
  return loss / static_cast<double>(std::max<std::int64_t>(counted, 1));
}

CheckpointMeta Trainer::checkpoint_meta() const {
  CheckpointMeta meta;
  meta.step = step_;
  meta.adam_updates = optimizer_->updates();
  meta.skipped_steps = skipped_;
  meta.init_sha256 = init_sha256_;
  meta.config = config_;
  meta.data_position = train_data_->position();
  meta.init_seed = config_.train.seed;
  meta.data_seed = config_.train.data_seed;
  return meta;
}

void Trainer::finish_checkpoint_in_flight() {
  if (checkpoint_in_flight_.valid()) checkpoint_in_flight_.get();
}

void Trainer::checkpoint_in_background() {
  if (distributed()) {
    save_checkpoint();
    return;
  }
  finish_checkpoint_in_flight();  // one in flight: bounded host memory, checkpoints in order
  // The snapshot (downloads of the weights and moments) is taken here, at this step; hashing,
  // encoding, writing and pruning run on the other thread.
  checkpoint_in_flight_ = std::async(
      std::launch::async,
      [s = snapshot_checkpoint(run_dir_ / "checkpoints", *model_, optimizer_->m_host(),
                               optimizer_->v_host(), checkpoint_meta(),
                               config_.train.keep_checkpoints)] { return write_checkpoint(s); });
}

fs::path Trainer::save_checkpoint() {
  finish_checkpoint_in_flight();
  const CheckpointMeta meta = checkpoint_meta();
  if (!distributed()) {
    return fp8lab::save_checkpoint(run_dir_ / "checkpoints", *model_, *optimizer_, meta,
                                   config_.train.keep_checkpoints);
  }
  // Every rank joins the gathers of the moment shards; rank 0 writes a checkpoint that does not
  // depend on the world size.
  std::vector<float> m = gather_shards(optimizer_->m_host()),
                     v = gather_shards(optimizer_->v_host());
  fs::path dir = run_dir_ / "checkpoints" / fmt::format("step_{:08d}", step_);
  if (writer()) {
    dir = fp8lab::save_checkpoint(run_dir_ / "checkpoints", *model_, std::move(m), std::move(v),
                                  meta, config_.train.keep_checkpoints);
  }
  comm_->barrier();  // no rank moves on (or resumes) before the checkpoint exists
  return dir;
}

std::vector<float> Trainer::gather_shards(const std::vector<float>& shard) {
  const Shard s = optimizer_->shard();
  const std::int64_t total = model_->parameter_count();
  std::vector<float> host(static_cast<std::size_t>(total));
  // A temporary full-size buffer only while checkpointing: the steady state keeps 1/world.
  Buffer full = backend_.allocate(MemoryKind::workspace, DType::f32, Shape{total}, "zero1.gather");
  if (s.size() > 0) {
    const TensorView mine{static_cast<float*>(full.view().data) + s.begin, DType::f32,
                          Shape{s.size()}, full.view().device};
    backend_.upload(mine, shard.data());
  }
  backend_.synchronize();
  comm_->all_gather(full.view());
  backend_.download(full.view(), host.data());
  return host;
}

void Trainer::run() {
  const std::int64_t total = config_.train.steps;
  const std::int64_t first = step_;
  const auto start = Clock::now();
  std::optional<StepRecord> last;
  ProgressBar bar(options_.progress_bar);
  try {
    while (step_ < total) {
      StepRecord r = train_step();
      const TrainConfig& t = config_.train;
      if (t.eval_every > 0 && (step_ % t.eval_every == 0 || step_ == total)) {
        r.val_loss = validation_loss();
      }
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      const double eta =
          elapsed / static_cast<double>(step_ - first) * static_cast<double>(total - step_);
      if (step_ % std::max<std::int64_t>(t.log_every, 1) == 0 || step_ == total || r.val_loss) {
        if (writer()) append_metrics(run_dir_ / "metrics.jsonl", r, skipped_);
        bar.clear();
        if (options_.log) {
          std::fprintf(options_.log, "%s\n", format_step_line(r, total, eta).c_str());
          std::fflush(options_.log);  // visible at once when stdout is a file or a pipe
        }
      }
      bar.draw(step_, total, r.loss, eta);
      if (t.checkpoint_every > 0 && step_ % t.checkpoint_every == 0 && step_ < total)
        checkpoint_in_background();
      last = r;
    }
    bar.clear();
    save_checkpoint();  // after the one in flight; the run is complete when this returns
  } catch (...) {
    bar.clear();
    // A checkpoint in flight is finished (or its own error dropped): the run's error is the
    // one to report, and the checkpoint is what a resume starts from.
    try {
      finish_checkpoint_in_flight();
    } catch (...) {
    }
    write_run_record("failed", last ? &*last : nullptr);
    throw;
  }
  write_run_record("completed", last ? &*last : nullptr);
}

// The commit this binary's numbers come from ("<sha>", "<sha> dirty", or "unknown dirty"),
// read once per process: the record names it for every run, as a study does.
static const std::string& source_commit() {
  static const std::string text = [] {
    const SourceInfo source = git_source_info(FP8LAB_SOURCE_DIR);
    return source.commit + (source.dirty ? " dirty" : "");
  }();
  return text;
}

void Trainer::write_run_record(const std::string& status, const StepRecord* last) {
  if (!writer()) return;
  json j{{"fp8lab_version", "0.1.0"},
         {"status", status},
         {"started_utc", started_utc_},
         {"updated_utc", utc_now_iso8601()},
         {"preset", config_.preset},
         {"policy", policy_name(config_.precision.policy)},
         {"compute", compute_mode_name(config_.precision.compute)},
         {"backend", backend_.name()},
         {"device", backend_.device_name()},
         {"source_commit", source_commit()},
         {"parameter_count", model_->parameter_count()},
         {"init_seed", config_.train.seed},
         {"init_sha256", init_sha256_},
         {"step", step_},
         {"skipped_steps", skipped_},
         {"tokens_seen",
          step_ * config_.train.grad_accum * config_.train.micro_batch * config_.model.seq_len},
         {"peak_mib", static_cast<double>(backend_.memory_stats().peak_bytes) / (1024.0 * 1024.0)}};
  for (const MemoryOption& m : kMemoryOptions) j[std::string(m.key)] = config_.precision.*m.on;
  if (last) {
    j["final_loss"] = last->loss;
    if (last->val_loss) j["final_val_loss"] = *last->val_loss;
  }
  if (status == "completed") j["final_params_sha256"] = model_->parameter_sha256();
  write_json_atomic(run_dir_ / "run.json", j);
}

}  // namespace fp8lab
