// `fp8lab study`: trains and scores each arm as a child process of the same fp8lab binary.
// An arm is finished when arms/<arm>/DONE exists; anything less is resumed (train --resume picks
// up the arm's latest checkpoint), so an interrupted study never loses a finished arm.
#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "core/utc_time.hpp"
#include "fp8lab/config.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"
#include "fp8lab/output_dir.hpp"
#include "fp8lab/study.hpp"

namespace fp8lab {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

json read_json(const fs::path& file) { return read_json_file(file); }

void write_text(const fs::path& file, const std::string& text) {
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    FP8LAB_CHECK_KIND(ErrorKind::io, out.good(), "cannot write '{}'", tmp.string());
  }
  fs::rename(tmp, file);
}

// The error a child fp8lab reported last in its log ("fp8lab: CUDA error: ... [at file:line]"):
// its kind and its message without the source location; nothing when it reported none.
std::optional<std::pair<ErrorKind, std::string>> child_error(const fs::path& log) {
  std::ifstream in(log);
  std::optional<std::pair<ErrorKind, std::string>> last;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("$ ")) last.reset();  // run_child starts each child's part of the log
    constexpr std::string_view kHead = "fp8lab: ";
    if (!line.starts_with(kHead)) continue;
    const std::size_t colon = line.find(": ", kHead.size());
    if (colon == std::string::npos) continue;
    const auto kind =
        error_kind_from_name(std::string_view(line).substr(kHead.size(), colon - kHead.size()));
    if (!kind) continue;
    std::string message = line.substr(colon + 2);
    if (const auto at = message.rfind(" ["); at != std::string::npos && message.ends_with("]"))
      message.resize(at);
    last.emplace(*kind, message);
  }
  return last;
}

// A child's failure, with the kind and message of the error it reported (else its exit code's
// kind, docs/cli.md): a study whose arm had bad input exits as that arm did, and says why.
void check_child_status(int status, const std::string& prefix, const fs::path& log) {
  if (status == 0) return;
  const bool exited = WIFEXITED(status);
  const int code = exited ? WEXITSTATUS(status) : -1;
  const std::string how =
      exited ? fmt::format("exit status {}", code) : std::string("killed by a signal");
  if (const auto reported = child_error(log);
      reported && exited && exit_code_for(reported->first) == code)
    FP8LAB_FAIL(reported->first, "{}failed ({}): {}; see {}", prefix, how, reported->second,
                log.string());
  FP8LAB_FAIL(exited ? error_kind_for_exit_code(code) : ErrorKind::internal,
              "{}failed ({}); see {}", prefix, how, log.string());
}

// Runs `args` (argv[0] = the fp8lab binary), appending its output to `log` and echoing each line
// to stdout with a prefix. Returns the wall-clock seconds; throws if the child fails.
double run_child(const std::vector<std::string>& args, const fs::path& log, const std::string& prefix,
                 const std::string& gpu = "") {
  std::string command = gpu.empty() ? "" : "CUDA_VISIBLE_DEVICES=" + shell_quote(gpu) + " ";
  for (const auto& a : args) command += shell_quote(a) + " ";
  command += "2>&1";
  std::ofstream log_out(log, std::ios::app);
  log_out << "$ " << command << "\n";
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  FP8LAB_CHECK_KIND(ErrorKind::io, pipe != nullptr, "cannot start '{}'", command);
  char line[4096];
  while (std::fgets(line, sizeof line, pipe.get())) {
    log_out << line;
    log_out.flush();
    std::printf("%s%s", prefix.c_str(), line);
    std::fflush(stdout);
  }
  check_child_status(pclose(pipe.release()), prefix, log);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs `args` and returns what it prints on stdout; its stderr goes to `log`.
std::string capture_child(const std::vector<std::string>& args, const fs::path& log,
                          const std::string& prefix) {
  std::string command;
  for (const auto& a : args) command += shell_quote(a) + " ";
  command += "2>>" + shell_quote(log.string());
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  FP8LAB_CHECK_KIND(ErrorKind::io, pipe != nullptr, "cannot start '{}'", command);
  std::string out;
  char buf[4096];
  while (const std::size_t n = std::fread(buf, 1, sizeof buf, pipe.get())) out.append(buf, n);
  check_child_status(pclose(pipe.release()), prefix, log);
  return out;
}

// The resolved config of a run without what an arm may differ in: its precision, the keys a null
// arm names, and for a resource arm (time and memory only) its step count. Read through
// RunConfig first, so that a config written before a key existed shows that key's default.
json comparable_config(const json& written, const StudyArm& arm) {
  json c = to_json(run_config_from_json(written));
  c.erase("precision");
  if (arm.resource_only && c.contains("train")) c["train"].erase("steps");
  for (const auto& key : arm.may_differ_in) {
    const auto dot = key.find('.');
    if (c.contains(key.substr(0, dot))) c[key.substr(0, dot)].erase(key.substr(dot + 1));
  }
  return c;
}
json comparable_config(const fs::path& run_dir, const StudyArm& arm) {
  return comparable_config(read_json(run_dir / "config.json"), arm);
}

// Every arm must start from its reference's bytes with the reference's data and schedule settings
// (the reference is the control, or the bf16 arm of the arm's seed group).
void check_matched(const StudyPlan& plan, const fs::path& out) {
  for (const auto& arm : plan.arms) {
    const StudyArm& ref = study_reference(plan, arm);
    const fs::path ref_run = study_arm_dir(out, ref) / "run";
    const fs::path run = study_arm_dir(out, arm) / "run";
    if (&ref == &arm || !fs::exists(run / "run.json") || !fs::exists(ref_run / "run.json")) continue;
    const json ref_record = read_json(ref_run / "run.json");
    const json record = read_json(run / "run.json");
    FP8LAB_CHECK(
        record.value("init_sha256", json()) == ref_record.value("init_sha256", json()),
        "arm '{}' started from weights {} but its reference '{}' from {}: the study is not "
        "matched",
        arm.name, json_excerpt(record.value("init_sha256", json())), ref.name,
        json_excerpt(ref_record.value("init_sha256", json())));
    const json config = comparable_config(run, arm);
    const json ref_config = comparable_config(ref_run, arm);
    FP8LAB_CHECK(
        config == ref_config,
        "arm '{}' differs from its reference '{}' in more than precision: the study is not "
        "matched ({})",
        arm.name, ref.name, json_excerpt(json::diff(ref_config, config), 400));
  }
}

std::vector<std::string> train_command(const StudyPlan& plan, const StudyArm& arm,
                                       const StudyRunOptions& o, const fs::path& run, bool resume) {
  std::vector<std::string> args{o.executable.string(), "train"};
  args.insert(args.end(), plan.train_args.begin(), plan.train_args.end());
  args.insert(args.end(), arm.extra_train_args.begin(), arm.extra_train_args.end());
  const std::vector<std::string> precision = study_arm_precision_args(arm);
  args.insert(args.end(), precision.begin(), precision.end());
  args.insert(args.end(), {"--policy", arm.policy, "--out", run.string(), "--no-progress"});
  if (arm.mlp_recompute) args.push_back("--mlp-recompute");
  if (resume) args.push_back("--resume");
  return args;
}

// Before an arm trains: the config `fp8lab train` resolves for it (--print-config) must equal its
// reference's in everything but precision, so that a mismatched arm costs no training time.
void check_matched_before_training(const StudyPlan& plan, const StudyArm& arm,
                                   const StudyRunOptions& o, const fs::path& log,
                                   const std::string& prefix) {
  const StudyArm& ref = study_reference(plan, arm);
  if (&ref == &arm) return;
  const auto resolved = [&](const StudyArm& a) {
    std::vector<std::string> args =
        train_command(plan, a, o, study_arm_dir(o.out, a) / "run", false);
    args.push_back("--print-config");
    return comparable_config(parse_json(capture_child(args, log, prefix),
                                        fmt::format("resolved config of arm '{}'", a.name)),
                             arm);
  };
  const json config = resolved(arm), ref_config = resolved(ref);
  FP8LAB_CHECK(config == ref_config,
               "arm '{}' would differ from its reference '{}' in more than precision: the study is "
               "not matched, so it is not trained ({})",
               arm.name, ref.name, json_excerpt(json::diff(ref_config, config), 400));
}

void run_arm(const StudyPlan& plan, const StudyArm& arm, std::size_t index, const StudyRunOptions& o,
             const std::string& gpu) {
  const fs::path dir = study_arm_dir(o.out, arm);
  const fs::path run = dir / "run";
  const std::string prefix = fmt::format("[{}/{} {}{}] ", index + 1, plan.arms.size(), arm.name,
                                         gpu.empty() ? "" : " gpu " + gpu);
  if (study_arm_finished(o.out, arm)) {
    std::printf("%sfinished earlier: kept\n", prefix.c_str());
    return;
  }
  fs::create_directories(dir);
  // Training: a run that completed is not trained again (only its scoring may be missing).
  const fs::path timing_file = dir / "timing.json";
  json timing = fs::exists(timing_file) ? read_json(timing_file) : json{{"train_segments_s", json::array()}};
  const bool completed = fs::exists(run / "run.json") &&
                         json_has_string(read_json(run / "run.json"), "status", "completed");
  if (!completed) {
    check_matched_before_training(plan, arm, o, dir / "train.log", prefix);
    const bool resume = fs::exists(run / "checkpoints" / "latest");
    std::printf("%s%s training (%s)\n", prefix.c_str(), resume ? "resuming" : "starting",
                arm.variant.c_str());
    const double seconds =
        run_child(train_command(plan, arm, o, run, resume), dir / "train.log", prefix, gpu);
    timing["train_segments_s"].push_back(seconds);
    write_text(timing_file, timing.dump(2) + "\n");
  }
  check_matched(plan, o.out);
  // One scoring of the final weights into `name`.json (kept once written), its seconds in
  // timing.json under `name`_s.
  const auto score_once = [&](const std::string& name, const std::string& policy,
                              const std::vector<std::string>& eval_args, const std::string& what) {
    const fs::path result = dir / (name + ".json");
    if (fs::exists(result)) return;
    std::printf("%sscoring %s\n", prefix.c_str(), what.c_str());
    std::vector<std::string> args{o.executable.string(), "eval", "--checkpoint", run.string(),
                                  "--policy", policy, "--recipe", arm.recipe};
    args.insert(args.end(), eval_args.begin(), eval_args.end());
    args.insert(args.end(), {"--json-file", result.string() + ".part"});
    timing[name + "_s"] = run_child(args, dir / "eval.log", prefix, gpu);
    fs::rename(result.string() + ".part", result);
    write_text(timing_file, timing.dump(2) + "\n");
  };
  // Under the arm's own policy, and under bf16 (reported separately); then the plan's further
  // scorings under the arm's own policy.
  std::vector<std::string> policies{arm.policy};
  if (arm.policy != "bf16") policies.push_back("bf16");
  for (const auto& policy : policies)
    score_once("eval_" + policy, policy, plan.eval_args, "under " + policy);
  for (const StudyScore& score : plan.scores)
    score_once("score_" + score.name, arm.policy, score.eval_args,
               "'" + score.name + "' under " + arm.policy);
  write_text(dir / "DONE", "finished\n");
}

// The frozen resource check: `fp8lab bench model` on every arm's precision, from the same
// weights (the study's init seed, passed in resource_check_args) and the same batch.
void run_resource_check(const StudyPlan& plan, const StudyRunOptions& o) {
  const fs::path result = o.out / "resource_check.json";
  if (plan.resource_check_args.empty() || fs::exists(result)) return;
  std::vector<std::string> args{o.executable.string(), "bench", "model"};
  args.insert(args.end(), plan.resource_check_args.begin(), plan.resource_check_args.end());
  args.push_back("--arms");
  for (const auto& arm : plan.arms) {
    const std::string name = study_arm_bench_name(arm);
    if (std::find(args.begin(), args.end(), name) == args.end()) args.push_back(name);
  }
  args.insert(args.end(), {"--json-file", result.string() + ".part"});
  std::printf("[resource check] fp8lab bench model on %zu arms\n", plan.arms.size());
  run_child(args, o.out / "resource_check.log", "[resource check] ");
  fs::rename(result.string() + ".part", result);
}

// An arm's seconds (training segments plus scoring) from its timing.json; 0 without one.
double arm_seconds(const fs::path& dir) {
  const fs::path file = dir / "timing.json";
  if (!fs::exists(file)) return 0.0;
  const json timing = read_json(file);
  double total = 0.0;
  for (const auto& [key, value] : timing.items()) {
    if (key == "train_segments_s")
      for (const auto& s : value) total += s.get<double>();
    else if (key.starts_with("eval_") || key.starts_with("score_"))
      total += value.get<double>();
  }
  return total;
}

// What an arm is expected to take: the longest finished arm's seconds (0 before any finished).
double longest_finished_arm_s(const StudyPlan& plan, const fs::path& out) {
  double longest = 0.0;
  for (const auto& arm : plan.arms)
    if (study_arm_finished(out, arm))
      longest = std::max(longest, arm_seconds(study_arm_dir(out, arm)));
  return longest;
}

// "N arms to train: about T at S an arm (the longest so far)", `slots` arms at a time.
std::string time_left_text(std::size_t left, double arm_s, std::size_t slots) {
  return fmt::format(
      "{} arm{} to train: about {} at {} an arm (the longest so far)", left, left == 1 ? "" : "s",
      format_duration(static_cast<double>(left) * arm_s / static_cast<double>(slots)),
      format_duration(arm_s));
}

// Under --stop-after: whether an arm started now would likely end after the limit. An arm is
// expected to take as long as the longest finished one; before any has finished, one starts.
struct StopAfter {
  double limit_s = 0.0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double expected_arm_s = 0.0;
  bool stopped = false;
  bool no_time_for_another() const {
    if (limit_s <= 0.0 || expected_arm_s <= 0.0) return false;  // no limit, or no estimate yet
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return elapsed + expected_arm_s > limit_s;
  }
};

// How `next` may differ from the `previous` plan of a study directory: every key but "arms" the
// same; the previous arms, in their order, less any that never started (`started(name)`: the
// arm has a directory under arms/), then new arms at the end. So a study grows by seed groups or
// variants and sheds pending arms its question no longer needs (a pending arm changed in place
// counts as dropped and added), but never changes or reorders an arm that has started. nullopt
// when `next` is not such a change; else the names of the arms it drops.
std::optional<std::vector<std::string>> plan_change_dropped_arms(
    const json& previous, const json& next,
    const std::function<bool(const std::string&)>& started) {
  if (!previous.is_object() || !next.is_object() || !previous.contains("arms") ||
      !next.contains("arms"))
    return std::nullopt;
  const json& before = previous["arms"];
  const json& after = next["arms"];
  if (!before.is_array() || !after.is_array()) return std::nullopt;
  json rest_before = previous, rest_after = next;
  rest_before.erase("arms");
  rest_after.erase("arms");
  if (rest_before != rest_after) return std::nullopt;
  std::vector<std::string> dropped;
  std::size_t j = 0;  // the next arm of `after` to match
  for (const json& arm : before) {
    if (j < after.size() && after[j] == arm) {
      ++j;
      continue;
    }
    const std::string name = arm.value("name", std::string{});
    if (name.empty() || started(name)) return std::nullopt;  // a started arm changed or moved
    dropped.push_back(name);
  }
  return dropped;  // after[j..] are the arms added at the end
}

// Trains and scores the arms in `order`, one at a time per GPU slot. A slot takes the first
// waiting arm whose reference has finished (a reference itself is always ready). After a failure
// no new arm starts; the first failure is rethrown once the running arms are done.
// Returns the number of arms left waiting (non-zero only when `stop` ended the run early).
std::size_t run_arms(const StudyPlan& plan, const std::vector<std::size_t>& order,
                     const StudyRunOptions& o, StopAfter& stop) {
  enum State { waiting, running, finished, failed };
  std::vector<State> state(plan.arms.size(), waiting);
  stop.expected_arm_s = std::max(stop.expected_arm_s, longest_finished_arm_s(plan, o.out));
  std::vector<std::size_t> reference(plan.arms.size());
  for (std::size_t i = 0; i < plan.arms.size(); ++i)
    reference[i] = static_cast<std::size_t>(&study_reference(plan, plan.arms[i]) - plan.arms.data());
  std::mutex mu;
  std::condition_variable cv;
  std::exception_ptr failure;
  const std::vector<std::string> slots = o.gpus.empty() ? std::vector<std::string>{""} : o.gpus;
  const auto done = [&](std::size_t i) { return study_arm_finished(o.out, plan.arms[i]); };
  // Before an arm trains: how many are left and, once one has finished, about how long they
  // take at the longest finished arm's time (the estimate --stop-after uses).
  const auto print_time_left = [&](std::size_t pick) {
    if (done(pick) || stop.expected_arm_s <= 0) return;
    std::size_t left = 0;
    for (std::size_t i : order) left += (state[i] == waiting || i == pick) && !done(i) ? 1 : 0;
    std::printf("[study] %s\n", time_left_text(left, stop.expected_arm_s, slots.size()).c_str());
    std::fflush(stdout);
  };
  auto worker = [&](const std::string& gpu) {
    for (;;) {
      std::size_t pick = plan.arms.size();
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] {
          if (failure) return true;
          bool any_waiting = false;
          for (std::size_t i : order) {
            if (state[i] != waiting) continue;
            any_waiting = true;
            if (reference[i] == i || state[reference[i]] == finished) {
              pick = i;
              return true;
            }
          }
          return !any_waiting;
        });
        if (failure || pick == plan.arms.size()) return;
        // A finished arm is only kept, which takes no time.
        if (!done(pick) && stop.no_time_for_another()) {
          stop.stopped = true;
          return;
        }
        state[pick] = running;
        print_time_left(pick);
      }
      State outcome = finished;
      try {
        run_arm(plan, plan.arms[pick], pick, o, gpu);
      } catch (...) {
        outcome = failed;
        std::lock_guard lock(mu);
        if (!failure) failure = std::current_exception();
      }
      {
        std::lock_guard lock(mu);
        state[pick] = outcome;
        if (outcome == finished)
          stop.expected_arm_s =
              std::max(stop.expected_arm_s, arm_seconds(study_arm_dir(o.out, plan.arms[pick])));
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (const auto& gpu : slots) threads.emplace_back(worker, gpu);
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  return static_cast<std::size_t>(std::count(state.begin(), state.end(), waiting));
}

}  // namespace

void adopt_study_plan(const StudyPlan& plan, const fs::path& out) {
  // A study directory belongs to one plan: resuming with a different config is refused, but for
  // arms added at the end of the list (more seed groups, another variant), which then train
  // beside the finished ones and join the record, and arms dropped before they started.
  fs::create_directories(out);
  const fs::path plan_file = out / "study.json";
  if (fs::exists(plan_file)) {
    const json previous = read_json(plan_file);
    if (previous != plan.source) {
      const auto dropped = plan_change_dropped_arms(
          previous, plan.source,
          [&](const std::string& n) { return fs::exists(out / "arms" / n); });
      FP8LAB_CHECK(dropped.has_value(),
                   "'{}' holds a study with another config; a config may only add arms at the "
                   "end of its list and drop arms that have not started (else use a new --out "
                   "directory; differences: {})",
                   out.string(), json_excerpt(json::diff(previous, plan.source), 400));
      const std::size_t kept = previous["arms"].size() - dropped->size();
      const std::size_t added = plan.source["arms"].size() - kept;
      if (!dropped->empty())
        std::printf("the config drops %zu arm%s that had not started (%s) from the study in '%s'\n",
                    dropped->size(), dropped->size() == 1 ? "" : "s",
                    fmt::format("{}", fmt::join(*dropped, ", ")).c_str(), out.string().c_str());
      if (added > 0)
        std::printf("the config adds %zu arm%s to the study in '%s'\n", added,
                    added == 1 ? "" : "s", out.string().c_str());
      write_text(plan_file, plan.source.dump(2) + "\n");
    }
  } else {
    write_text(plan_file, plan.source.dump(2) + "\n");
  }
}

std::size_t run_study(const StudyPlan& plan, const StudyRunOptions& o) {
  // One study process per record directory; a directory an older fp8lab wrote has study.json.
  ClaimOptions claim;
  claim.force = o.force;
  claim.written_by_older_fp8lab = [](const fs::path& d) { return fs::exists(d / "study.json"); };
  const OutputDirectory lock(o.out, "study", claim);
  fs::create_directories(o.out / "arms");
  adopt_study_plan(plan, o.out);
  const std::vector<std::size_t> order = study_run_order(plan);
  StopAfter stop;
  stop.limit_s = o.stop_after_s;
  const std::size_t pending = run_arms(plan, order, o, stop);
  if (pending > 0) {
    std::printf("stopped after %.0f s (--stop-after %g, an arm takes about %.0f s): %zu arms "
                "pending; the same command continues them\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - stop.start).count(),
                o.stop_after_s, stop.expected_arm_s, pending);
  } else {
    run_resource_check(plan, o);
  }
  write_study_record(plan, o);
  return pending;
}

std::vector<std::size_t> study_run_order(const StudyPlan& plan) {
  // Every arm is checked against its reference as soon as it has trained, and a study cut short
  // (--stop-after) leaves whole groups, every pair in them complete, rather than every
  // reference and few pairs.
  std::vector<std::size_t> references, order;
  for (std::size_t i = 0; i < plan.arms.size(); ++i) {
    if (&study_reference(plan, plan.arms[i]) != &plan.arms[i]) continue;
    if (plan.arms[i].name == plan.control) references.insert(references.begin(), i);
    else references.push_back(i);
  }
  for (std::size_t r : references) {
    order.push_back(r);
    for (std::size_t i = 0; i < plan.arms.size(); ++i)
      if (i != r && &study_reference(plan, plan.arms[i]) == &plan.arms[r]) order.push_back(i);
  }
  return order;
}

std::string study_plan_report(const StudyPlan& plan, const fs::path& out) {
  std::string text = fmt::format("study '{}': {} arms, control '{}', in {} (run order)\n",
                                 plan.name, plan.arms.size(), plan.control, out.string());
  text += "| # | arm | variant | reference | state |\n|---:|---|---|---|---|\n";
  std::size_t left = 0, n = 0;
  for (std::size_t i : study_run_order(plan)) {
    const StudyArm& arm = plan.arms[i];
    const fs::path dir = study_arm_dir(out, arm);
    const bool finished = study_arm_finished(out, arm);
    left += finished ? 0 : 1;
    const StudyArm& ref = study_reference(plan, arm);
    text += fmt::format("| {} | {} | {} | {} | {} |\n", ++n, arm.name, arm.variant,
                        &ref == &arm ? "(itself)" : ref.name,
                        finished ? "finished" : fs::exists(dir / "run") ? "started" : "waiting");
  }
  if (left == 0) return text + "every arm has finished\n";
  const double arm_s = longest_finished_arm_s(plan, out);
  if (arm_s <= 0.0)
    return text + fmt::format("{} arm{} to train; no arm has finished, so no estimate yet\n", left,
                              left == 1 ? "" : "s");
  return text + time_left_text(left, arm_s, 1) + "\n";
}

}  // namespace fp8lab
