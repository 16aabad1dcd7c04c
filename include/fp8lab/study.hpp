// The precision study: a matched A/B of training arms that differ only in precision policy
// (and, for resource arms, MLP recompute), each trained by `fp8lab train` and scored by
// `fp8lab eval` as child processes of `fp8lab study`. Running arms as separate processes keeps
// every arm's peak memory its own, gives each a complete log, and makes resuming trivial: an arm
// whose directory holds DONE is finished and never re-run.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace fp8lab {

struct StudyArm {
  std::string name;            // directory name under arms/, e.g. "fp8-mlp"
  std::string policy;          // bf16 | fp8-mlp | fp8-linears
  std::string recipe = "tensorwise";  // precision.fp8_recipe of an FP8 arm
  std::string fp8_wgrad = "fp8";      // precision.fp8_wgrad: fp8 | bf16
  bool mlp_recompute = false;
  bool resource_only = false;  // trained and measured, but not the candidate of the quality verdict
  // A null arm: bf16 like its reference, with a harmless change of arithmetic (the config keys of
  // may_differ_in, e.g. train.loss_chunk_rows, which reorders the LM head's fp32 dW sums). Its
  // ΔCE is the protocol's own noise: what two runs of one recipe differ by.
  bool null_arm = false;
  std::vector<std::string> may_differ_in;  // "section.key" the matching check leaves out
  // Arms of one variant in different groups are seed replicates of each other: the record pairs
  // each with its group's reference and gives the pairs' mean and interval. Default: the arm's
  // policy, recipe, wgrad and null-ness ("fp8-mlp blockwise", "bf16 null").
  std::string variant;
  // Arms of one group are matched against each other (same initial weights, same data and
  // schedule); groups differ in anything else, e.g. a replicate of the study under another seed
  // ("train_args": ["--set", "train.seed=7"]). Every group holds a plain bf16 arm, its reference.
  std::string group;
  std::vector<std::string> extra_train_args;
};

// A further scoring of every arm's final weights under its own policy, beside the main one:
// another held-out split, more batches, ... Its seed pairs get their own section in the record.
struct StudyScore {
  std::string name;                    // [a-z0-9_-]+; the arm's file is score_<name>.json
  std::vector<std::string> eval_args;  // replace the plan's eval_args for this scoring
};

struct StudyPlan {
  std::string name;
  std::string control;                      // name of the control arm (policy bf16)
  std::vector<StudyArm> arms;
  std::vector<std::string> train_args;      // shared by every arm: preset, steps, data, seed, ...
  std::vector<std::string> eval_args;       // shared by every evaluation: held-out data, batch
  // `fp8lab bench model` arguments of the frozen resource check (preset, batch, backend, ...);
  // the study adds --arms (one per study arm) and --json. Empty: no resource check.
  std::vector<std::string> resource_check_args;
  std::vector<StudyScore> scores;           // "scores": further scorings (may be empty)
  nlohmann::json source;                    // the config as read, kept for the record
};

// The arm an arm is matched and compared against: the plan's control for the control's group,
// otherwise the first plain bf16 arm of the arm's group.
const StudyArm& study_reference(const StudyPlan& plan, const StudyArm& arm);

// An arm's directory under the study's --out (arms/<name>), and whether the arm has finished:
// its DONE marker, written last, after its scores.
std::filesystem::path study_arm_dir(const std::filesystem::path& out, const StudyArm& arm);
bool study_arm_finished(const std::filesystem::path& out, const StudyArm& arm);

// Parses and validates a study config (JSON). Errors name the offending key and value.
StudyPlan parse_study_plan(const nlohmann::json& config);
StudyPlan load_study_plan(const std::filesystem::path& file);

}  // namespace fp8lab

namespace fp8lab {

struct StudyRunOptions {
  std::filesystem::path out;          // the study's record directory
  // GPUs to train on, one arm per GPU at a time (CUDA_VISIBLE_DEVICES of each child); empty: one
  // arm at a time on the default device. A reference trains before the arms matched against it.
  std::vector<std::string> gpus;
  std::filesystem::path executable;   // the fp8lab binary that trains and evaluates the arms
  std::filesystem::path source_dir;   // the source tree (git commit and dirty flag)
  std::filesystem::path config_file;  // hashed into the manifest
  bool force = false;  // write into an --out fp8lab did not create (fp8lab/output_dir.hpp)
  // > 0: start no arm that would likely end after this many seconds from the start (its
  // expected length: the longest finished arm's, training plus scoring); the record then lists
  // the rest as pending. For a machine held for a fixed time, so that no arm is cut off midway.
  double stop_after_s = 0.0;
};

// Runs (or resumes) a study: trains every arm not yet finished, checks that all arms started
// from byte-identical weights on identical data settings (aborting otherwise), scores every
// final checkpoint under its own policy and under bf16, and writes the record bundle:
//   study.json, arms/<arm>/{run/, train.log, eval_<policy>.json, timing.json, DONE},
//   results.md, results.json, loss.svg, manifest.json.
// Returns the number of arms still pending (non-zero only under stop_after_s).
std::size_t run_study(const StudyPlan& plan, const StudyRunOptions& options);

// The order run_study trains the arms in (indices into plan.arms): group by group, the
// control's first, each group's reference before the arms compared with it, in config order.
std::vector<std::size_t> study_run_order(const StudyPlan& plan);

// What `fp8lab study CONFIG --out DIR --plan` prints, writing nothing: the arms in run order
// with their reference and state in DIR (finished, started, waiting), and how long the rest
// should take at the longest finished arm's time (the estimate --stop-after uses).
std::string study_plan_report(const StudyPlan& plan, const std::filesystem::path& out);

// Makes `plan` the plan of the study in `out` (its study.json): written where there is none,
// else the directory's plan must differ from `plan` only by arms added at the end of the list
// or dropped before they started (says which on stdout); otherwise throws, naming the
// differences. run_study calls it first; `fp8lab study --record-only` too, so that a record's
// study.json is always the plan it renders.
void adopt_study_plan(const StudyPlan& plan, const std::filesystem::path& out);

// The record files alone, from finished arms (run_study calls it; also usable to re-render).
// Arms not finished yet are listed as pending; the record is whole once every arm is.
void write_study_record(const StudyPlan& plan, const StudyRunOptions& options);

// The `fp8lab train --set` arguments that give an arm its precision (recipe, wgrad).
std::vector<std::string> study_arm_precision_args(const StudyArm& arm);
// The arm's name for `fp8lab bench model --arms` (policy, recipe and recompute).
std::string study_arm_bench_name(const StudyArm& arm);

}  // namespace fp8lab
