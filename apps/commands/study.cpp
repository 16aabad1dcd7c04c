// `fp8lab study CONFIG --out DIR`: a matched precision study, end to end, resumable.
#include "command_registry.hpp"
#include "fp8lab/study.hpp"

#include <cstdio>
#include <fstream>
#include <memory>

namespace fp8lab::cli {
namespace {

struct StudyCliOptions {
  std::string config, out;
  bool force = false;
};

void run_study_command(const StudyCliOptions& o) {
  const StudyPlan plan = load_study_plan(o.config);
  StudyRunOptions run;
  run.out = o.out;
  run.executable = std::filesystem::canonical("/proc/self/exe");
  run.source_dir = FP8LAB_SOURCE_DIR;
  run.config_file = o.config;
  run.force = o.force;
  std::printf("fp8lab study '%s': %zu arms, control '%s', record in %s\n", plan.name.c_str(),
              plan.arms.size(), plan.control.c_str(), o.out.c_str());
  run_study(plan, run);
  std::ifstream results(std::filesystem::path(o.out) / "results.md");
  std::printf("\n%s", std::string(std::istreambuf_iterator<char>(results), {}).c_str());
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
      "arms are kept, an interrupted arm continues from its latest checkpoint.\n"
      "DIR receives study.json, arms/<arm>/..., results.md, results.json, loss.svg, manifest.json.\n"
      "Example: fp8lab study configs/study-kjv-tiny.json --out runs/study-kjv\n");
  sub.add_option("config", o->config, "study config (JSON)")->required()->check(CLI::ExistingFile);
  sub.add_option("--out", o->out, "record directory (created; reused to resume)")->required();
  sub.add_flag("--force", o->force, "write into --out even when fp8lab did not create it");
  sub.callback([o] { run_study_command(*o); });
}

const CommandRegistration kRegistration{
    {"study", "Run a matched precision study (BF16 control vs FP8 arms) and write its record",
     setup_study}};

}  // namespace
}  // namespace fp8lab::cli
