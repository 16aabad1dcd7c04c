// The training loop: data, AdamW with schedule, gradient accumulation, clipping, the non-finite
// policy, periodic validation, logs, metrics.jsonl, the run record and checkpoints.
//
// Run directory (claimed and locked, see fp8lab/output_dir.hpp: one trainer per directory):
//   config.json     the fully resolved RunConfig
//   run.json        the run record: init_sha256, parameter count, policy, status, final numbers,
//                   the device and the binary's source commit
//   metrics.jsonl   one JSON object per logged step: step, loss, lr, grad_norm, tokens_per_s,
//                   peak_mib, skipped_steps (+ val_loss on validation steps)
//   checkpoints/    see fp8lab/checkpoint.hpp
#pragma once

#include "fp8lab/backend.hpp"
#include "fp8lab/checkpoint.hpp"
#include "fp8lab/config.hpp"
#include "fp8lab/model.hpp"
#include "fp8lab/optimizer.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8lab {

// Batches of `micro_batch` rows of seq_len input tokens and their next-token targets.
class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // inputs and targets: micro_batch * seq_len each.
  virtual void next(std::int32_t* inputs, std::int32_t* targets) = 0;
  virtual nlohmann::json position() const = 0;
  virtual void seek(const nlohmann::json& position) = 0;  // throws on a foreign position
  virtual void rewind() = 0;
  // Batches handed out since the start (over all epochs): a resumed run checks it against the
  // checkpoint's step, so that an edited step count cannot pass for another run's.
  virtual std::uint64_t batches_served() const = 0;
};

// The source config.data describes, for split "train" or "val".
std::unique_ptr<TokenSource> make_token_source(const RunConfig& config, std::string_view split);

class Communicator;
class OverlappedGradReduce;
class OutputDirectory;

struct TrainerOptions {
  bool resume = false;        // continue from <run_dir>/checkpoints/latest
  // The run directory must be new, empty or one fp8lab made for a run (fp8lab/output_dir.hpp);
  // force: accept any directory. Either way it is locked while the Trainer lives.
  bool force = false;
  bool progress_bar = false;  // redraw a bar with ETA on stderr (the CLI: when stderr is a tty)
  std::FILE* log = stdout;    // one line per logged step; nullptr for silence
  // Data parallelism (docs/distributed.md): every rank runs a Trainer with the same config and
  // run directory and its own communicator. The config's micro_batch x grad_accum is the GLOBAL
  // batch: rank k runs the micro-batches a with a % world == k (grad_accum must divide by the
  // world size), gradients are summed over ranks, AdamW's moments are sharded (ZeRO-1), and
  // only rank 0 writes files or logs. nullptr (or a world of 1): the single-process trainer.
  Communicator* comm = nullptr;
  // With a communicator of several ranks: all-reduce the gradients in buckets while the last
  // micro-batch's backward still runs (each bucket as soon as its blocks' gradients are final)
  // rather than in one all-reduce after it. Every element is summed in the same order either
  // way: the same bytes on the local communicators (tested); see docs/distributed.md for NCCL.
  bool overlap_grad_reduce = true;
  // Consecutive blocks merge into one bucket until it holds this many gradient elements
  // (default 4 Mi = 16 MiB of fp32); 0: one bucket per block.
  std::int64_t grad_bucket_elements = std::int64_t{1} << 22;
};

struct StepRecord {
  std::int64_t step = 0;  // optimizer steps completed, this one included
  double loss = 0;        // mean over the step's counted targets
  float lr = 0;
  double grad_norm = 0;  // before clipping
  double tokens_per_s = 0;
  double peak_mib = 0;
  bool skipped = false;  // non-finite, policy skip: no update was applied
  std::optional<double> val_loss;
};

class Trainer {
 public:
  Trainer(RunConfig config, std::filesystem::path run_dir, Backend& backend,
          TrainerOptions options = {});
  ~Trainer();

  void
  run();  // trains to config.train.steps (logging, validating, checkpointing); final checkpoint
  StepRecord train_step();
  double validation_loss();  // over eval_batches batches of the validation split (same each time)
  // Writes a checkpoint of the current step and returns its directory (after any checkpoint
  // run() still has in flight).
  std::filesystem::path save_checkpoint();

  GptModel& model() { return *model_; }
  AdamW& optimizer() { return *optimizer_; }
  std::int64_t step() const { return step_; }
  std::int64_t skipped_steps() const { return skipped_; }
  const std::string& init_sha256() const { return init_sha256_; }
  const RunConfig& config() const { return config_; }

 private:
  void resume_from_checkpoint();
  CheckpointMeta checkpoint_meta() const;
  // run()'s periodic checkpoint: one process takes the snapshot and writes it on another thread
  // while training goes on (hashing and writing a gpt50m checkpoint takes seconds); data
  // parallelism writes in place, all ranks waiting for it.
  void checkpoint_in_background();
  // Waits for the checkpoint in flight, rethrowing its error.
  void finish_checkpoint_in_flight();
  bool distributed() const { return world_ > 1; }
  bool writer() const { return rank_ == 0; }  // the one rank that writes files
  // The full flat buffer on the host from each rank's values of its own optimizer shard (a
  // collective).
  std::vector<float> gather_shards(const std::vector<float>& shard);
  void write_run_record(const std::string& status, const StepRecord* last);
  [[noreturn]] void abort_non_finite(const std::string& what);

  RunConfig config_;
  std::filesystem::path run_dir_;
  Backend& backend_;
  TrainerOptions options_;
  std::unique_ptr<OutputDirectory> run_dir_lock_;  // rank 0 only
  std::unique_ptr<GptModel> model_;
  std::unique_ptr<AdamW> optimizer_;
  // After model_: destroyed first (it may still wait on the gradient buffer's collectives).
  std::unique_ptr<OverlappedGradReduce> grad_reduce_;
  std::unique_ptr<TokenSource> train_data_, val_data_;
  Communicator* comm_ = nullptr;
  int rank_ = 0, world_ = 1;
  std::int64_t step_ = 0, skipped_ = 0;
  std::string init_sha256_;
  std::string started_utc_;
  std::future<std::filesystem::path> checkpoint_in_flight_;
};

}  // namespace fp8lab
