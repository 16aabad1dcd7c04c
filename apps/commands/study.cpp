// `fp8lab study CONFIG --out DIR`: a matched precision study, end to end, resumable.
#include "command_registry.hpp"
#include "commands/json_output.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"
#include "fp8lab/study.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fp8lab::cli {
namespace {

struct StudyCliOptions {
  std::string config, out, gpus;
  bool record_only = false;
  bool plan = false;
  bool force = false;
  std::optional<double> stop_after_s;
  JsonOutput json;
};

// "0,1" -> {"0", "1"}: the GPUs one arm each trains on at a time.
std::vector<std::string> gpu_list(const std::string& spec) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= spec.size() && !spec.empty()) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string id = spec.substr(start, comma - start);
    FP8LAB_CHECK_KIND(ErrorKind::invalid_argument,
                      !id.empty() && id.find_first_not_of("0123456789") == std::string::npos,
                      "--gpus '{}': expected GPU indices separated by commas, e.g. 0,1", spec);
    FP8LAB_CHECK_KIND(ErrorKind::invalid_argument,
                      std::find(out.begin(), out.end(), id) == out.end(),
                      "--gpus '{}': GPU {} is listed twice", spec, id);
    out.push_back(id);
    start = comma + 1;
  }
  return out;
}

void run_study_command(const StudyCliOptions& o) {
  const std::filesystem::path out(o.out);
  if (o.plan) {  // writes nothing
    std::fputs(study_plan_report(load_study_plan(o.config), out).c_str(), stdout);
    return;
  }
  o.json.check_not_input({o.config, out / "study.json", out / "results.json", out / "results.md",
                          out / "manifest.json"});
  const StudyPlan plan = load_study_plan(o.config);
  // Under --json the progress and results.md go to stderr; stdout gets only results.json.
  std::optional<StdoutToStderr> quiet_stdout;
  quiet_stdout.emplace(o.json.to_stdout);
  StudyRunOptions run;
  run.out = o.out;
  run.executable = std::filesystem::canonical("/proc/self/exe");
  run.source_dir = FP8LAB_SOURCE_DIR;
  run.config_file = o.config;
  run.gpus = gpu_list(o.gpus);
  run.force = o.force;
  if (o.stop_after_s) {
    FP8LAB_CHECK(std::isfinite(*o.stop_after_s) && *o.stop_after_s > 0,
                 "--stop-after {}: the seconds must be a positive number", *o.stop_after_s);
    run.stop_after_s = *o.stop_after_s;
  }
  if (o.record_only) {
    // Checked before adopt_study_plan writes study.json: a wrong --out gets nothing written.
    FP8LAB_CHECK(std::filesystem::is_directory(out / "arms"),
                 "--record-only: '{}' holds no study arms to record (train them first: fp8lab "
                 "study {} --out {})",
                 o.out, o.config, o.out);
    adopt_study_plan(plan, run.out);
    write_study_record(plan, run);
  } else {
    std::printf("fp8lab study '%s': %zu arms, control '%s', record in %s%s%s\n", plan.name.c_str(),
                plan.arms.size(), plan.control.c_str(), o.out.c_str(),
                run.gpus.empty() ? "" : ", arms in parallel on GPUs ", o.gpus.c_str());
    run_study(plan, run);
  }
  std::ifstream results(std::filesystem::path(o.out) / "results.md");
  std::printf("\n%s", std::string(std::istreambuf_iterator<char>(results), {}).c_str());
  quiet_stdout.reset();
  o.json.emit(read_json_file(out / "results.json"));
}

void setup_study(CLI::App& sub) {
  auto o = std::make_shared<StudyCliOptions>();
  sub.footer(
      "CONFIG (JSON) names the arms and what they share, e.g.\n"
      "  {\"name\": \"kjv-tiny\", \"control\": \"bf16\",\n"
      "   \"train_args\": [\"--preset\", \"tiny\", \"--steps\", \"300\", \"--set\", \"data.kind=shards\", ...],\n"
      "   \"eval_args\": [\"--data\", \"data/cache/kjv/byte\"],\n"
      "   \"arms\": [{\"name\": \"bf16\", \"policy\": \"bf16\"}, {\"name\": \"fp8-mlp\", \"policy\": \"fp8-mlp\"},\n"
      "            {\"name\": \"bf16-recompute\", \"policy\": \"bf16\", \"mlp_recompute\": true,\n"
      "             \"resource_only\": true}]}\n"
      "Each arm is trained by `fp8lab train` and scored by `fp8lab eval` under its own policy and\n"
      "under bf16. Arms must start from byte-identical weights with identical data and schedule\n"
      "settings: the study checks and aborts otherwise. Re-running the same command resumes: finished\n"
      "arms are kept, an interrupted arm continues from its latest checkpoint. A config that adds\n"
      "arms at the end of its list (another seed group) grows the study: its arms join the record;\n"
      "one may also drop arms that have not started.\n"
      "Seed replicates: arms of one \"variant\" in different \"group\"s are paired with their group's\n"
      "bf16 arm; results.md gives each pair's ΔCE and ΔBPB, their mean and 95% interval, and a\n"
      "verdict. An FP8 arm picks its scaling recipe with \"recipe\" (tensorwise, rowwise,\n"
      "blockwise) and \"fp8_wgrad\" (fp8, bf16); a \"null\": true bf16 arm changes only the keys it\n"
      "lists in \"may_differ_in\" (e.g. train.loss_chunk_rows) and measures the protocol's noise.\n"
      "DIR receives study.json, arms/<arm>/..., results.md, results.json, loss.svg, manifest.json.\n"
      "Example: fp8lab study configs/study-kjv-tiny.json --out runs/study-kjv\n"
      "On a machine held for ten minutes: fp8lab study CONFIG --out DIR --stop-after 560\n"
      "What is left and how long it takes: fp8lab study CONFIG --out DIR --plan\n"
      "--json prints results.json's content, --json-file writes it to another file too.\n");
  sub.add_option("config", o->config, "study config (JSON)")->required()->check(CLI::ExistingFile);
  sub.add_option("--out", o->out, "record directory (created; reused to resume)")->required();
  sub.add_option("--gpus", o->gpus,
                 "train arms in parallel, one per listed GPU (e.g. 0,1); default: one at a time");
  sub.add_flag("--record-only", o->record_only,
               "only (re)write the record from the arms finished so far (a partial study's "
               "record lists the rest as pending)");
  sub.add_flag("--plan", o->plan,
               "write nothing: print the arms in the order they train, each with its reference "
               "and its state in --out, and how long the rest should take")
      ->excludes("--record-only");
  sub.add_flag("--force", o->force, "write into --out even when fp8lab did not create it");
  sub.add_option("--stop-after", o->stop_after_s,
                 "SECONDS: start no arm that would likely end later than this (an arm is "
                 "expected to take as long as the longest finished one); the record lists the "
                 "rest as pending and the same command continues them");
  o->json.add_options(sub, "the results (results.json's content)");
  sub.callback([o] { run_study_command(*o); });
}

const CommandRegistration kRegistration{
    {"study", "Run a matched precision study (BF16 control vs FP8 arms) and write its record",
     setup_study}};

}  // namespace
}  // namespace fp8lab::cli
