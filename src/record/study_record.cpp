// The study's record bundle: results table (Markdown + JSON), loss curves (SVG) and a manifest of
// SHA-256 hashes, written from the finished arms' files alone.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "core/sha256.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"
#include "fp8lab/study.hpp"
#include "record/record.hpp"
#include "record/study_fp8_split.hpp"
#include "record/study_pairs.hpp"

namespace fp8lab {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct ArmResult {
  const StudyArm* arm = nullptr;
  json run, own_eval, bf16_eval, timing;
  std::vector<json> scores;  // the plan's further scorings, in the plan's order
  std::vector<std::pair<double, double>> losses;      // (step, training loss)
  std::vector<std::pair<double, double>> val_losses;  // (step, validation loss)
  double train_seconds = 0;
  // The GPU or CPU the arm trained on (run.json's "device"); empty for a run recorded before
  // the trainer wrote it.
  std::string device;
  std::string commit;  // run.json's "source_commit" ("<sha>" or "<sha> dirty"); empty: unrecorded
};

ArmResult load_arm(const StudyPlan& plan, const StudyArm& arm, const fs::path& dir) {
  ArmResult r;
  r.arm = &arm;
  for (const StudyScore& score : plan.scores)
    r.scores.push_back(read_json_file(dir / ("score_" + score.name + ".json")));
  r.run = read_json_file(dir / "run" / "run.json");
  const std::string run_json = (dir / "run" / "run.json").string();
  r.device = json_value_or(r.run, "device", std::string(), run_json);
  r.commit = json_value_or(r.run, "source_commit", std::string(), run_json);
  r.own_eval = read_json_file(dir / ("eval_" + arm.policy + ".json"));
  r.bf16_eval = read_json_file(dir / "eval_bf16.json");
  r.timing = read_json_file(dir / "timing.json");
  for (const auto& s : r.timing.at("train_segments_s")) r.train_seconds += s.get<double>();
  std::ifstream metrics(dir / "run" / "metrics.jsonl");
  std::string line;
  for (std::int64_t number = 1; std::getline(metrics, line); ++number) {
    if (line.empty()) continue;
    const json m = parse_json(
        line, fmt::format("{} line {}", (dir / "run" / "metrics.jsonl").string(), number));
    r.losses.emplace_back(m.at("step").get<double>(), m.at("loss").get<double>());
    if (m.contains("val_loss"))
      r.val_losses.emplace_back(m.at("step").get<double>(), m.at("val_loss").get<double>());
  }
  return r;
}

std::string signed_delta(double value, double control, const char* fmt_spec) {
  return fmt::format(fmt::runtime(fmt_spec), value - control);
}

std::string percent_delta(double value, double control) {
  return control > 0 ? fmt::format("{:+.1f}%", 100.0 * (value - control) / control) : "—";
}

// hashes[relative path] = sha256 for every file under dir except checkpoints older than latest.
void hash_tree(const fs::path& root, const fs::path& dir, json& hashes) {
  if (!fs::exists(dir)) return;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    // A run directory's claim and lock (fp8lab/output_dir.hpp) say who wrote it, not what.
    if (!entry.is_regular_file() || entry.path().filename().string().starts_with(".fp8lab-"))
      continue;
    hashes[fs::relative(entry.path(), root).string()] = sha256_file(entry.path());
  }
}

double flops_for(const json& run_config, double tokens) {
  const json& m = run_config.at("model");
  const auto d = m.at("d_model").get<std::int64_t>();
  return tokens * gpt_train_flops_per_token(m.at("n_layers").get<std::int64_t>(), d,
                                            m.at("seq_len").get<std::int64_t>(),
                                            m.at("vocab_size").get<std::int64_t>(), 4 * d);
}

// The frozen resource check's table (fp8lab bench model's JSON), or nothing when it did not run.
std::string resource_check_markdown(const fs::path& file) {
  if (!fs::exists(file)) return "";
  const json r = read_json_file(file);
  std::vector<std::vector<std::string>> rows;
  const json* first = nullptr;
  for (const auto& a : r.at("arms")) {
    if (first == nullptr) first = &a;
    const json& f = a.at("frozen");
    const json& st = a.at("step");
    const double ref_ms = first->at("frozen").at("median_ms").get<double>();
    const double ref_peak = first->at("frozen").at("peak_mib").get<double>();
    rows.push_back({a.at("arm").get<std::string>(),
                    fmt::format("{:.2f}", f.at("median_ms").get<double>()),
                    fmt::format("{:.0f}", f.at("peak_mib").get<double>()),
                    &a == first ? "—" : percent_delta(f.at("median_ms").get<double>(), ref_ms),
                    &a == first ? "—" : percent_delta(f.at("peak_mib").get<double>(), ref_peak),
                    fmt::format("{:.0f}", f.at("first_call_ms").get<double>()),
                    fmt::format("{:.0f}", st.at("tokens_per_s").get<double>()),
                    fmt::format("{:.0f}", st.at("peak_mib").get<double>())});
  }
  std::string md = fmt::format(
      "\n## Frozen resource check\n\n`fp8lab bench model`, {} backend, preset {} at B{} x T{}: "
      "the same weights (sha256 `{}`) and batch for every arm, median of {} forward+backward "
      "passes; then the full training step (AdamW included).\n\n",
      json_value_or(r, "backend", std::string("?"), "resource check"),
      json_value_or(r, "preset", std::string("?"), "resource check"),
      json_value_or(r, "batch", std::int64_t{0}, "resource check"),
      json_value_or(r, "seq_len", std::int64_t{0}, "resource check"),
      first ? json_value_or(*first, "weights_sha256", std::string("?"), "resource check") : "?",
      json_value_or(r, "repeats", std::int64_t{0}, "resource check"));
  md += markdown_table({"arm", "fwd+bwd ms", "peak MiB", "Δtime", "Δpeak", "first call ms",
                        "step tokens/s", "step peak MiB"},
                       rows);
  return md;
}

// loss.svg: each arm's training loss (EMA 0.9) coloured by variant and dashed by seed group,
// its validation losses as circles; loss_zoom.svg: the same over the last half of the steps,
// where the arms part; delta_ce.svg: ΔCE of every seed pair by variant, mean and interval.
// Training times compare only on one device: an arm and its reference that name different
// devices get no Δtime/token; a run recorded before the trainer named its device compares
// with any.
bool same_device(const ArmResult& a, const ArmResult& b) {
  return a.device.empty() || b.device.empty() || a.device == b.device;
}

// The arms grouped by a recorded property (device, commit), first seen first; arms that did
// not record it form a group named `unrecorded`. Empty when no arm recorded it.
std::vector<std::pair<std::string, std::string>> arms_by(const std::vector<ArmResult>& arms,
                                                         std::string ArmResult::*property,
                                                         const std::string& unrecorded) {
  std::vector<std::pair<std::string, std::string>> groups;  // (value, its arms)
  bool any = false;
  for (const auto& a : arms) {
    any = any || !(a.*property).empty();
    const std::string value = (a.*property).empty() ? unrecorded : a.*property;
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == value; });
    if (it == groups.end()) it = groups.insert(groups.end(), {value, ""});
    it->second += (it->second.empty() ? "`" : ", `") + a.arm->name + "`";
  }
  if (!any) groups.clear();
  return groups;
}

std::string groups_text(const std::vector<std::pair<std::string, std::string>>& groups) {
  std::string text;
  for (std::size_t i = 0; i < groups.size(); ++i)
    text += fmt::format("{}{} ({})", i ? "; " : "", groups[i].first, groups[i].second);
  return text;
}

// Where the arms ran: their devices (saying which time deltas that withholds) and the commits
// their trainers were built from. Empty when no arm recorded either.
std::string provenance_markdown(const std::vector<ArmResult>& arms) {
  std::string md;
  const auto devices = arms_by(arms, &ArmResult::device, "not recorded");
  if (devices.size() == 1) md += fmt::format("\nEvery arm trained on {}.\n", devices.front().first);
  if (devices.size() > 1)
    md += fmt::format(
        "\nDevices: {}. Δtime/token is given only where an arm and its reference "
        "trained on the same device.\n",
        groups_text(devices));
  const auto commits = arms_by(arms, &ArmResult::commit, "not recorded");
  if (commits.size() == 1)
    md += fmt::format("\nEvery arm trained at commit `{}`.\n", commits.front().first);
  if (commits.size() > 1) md += fmt::format("\nTrained at commits: {}.\n", groups_text(commits));
  return md;
}

void write_loss_charts(const StudyPlan& plan, const std::vector<ArmResult>& arms,
                       const std::vector<record::VariantSummary>& summaries, const fs::path& out) {
  std::vector<std::string> variants, groups;
  const auto index_of = [](std::vector<std::string>& list, const std::string& v) {
    auto it = std::find(list.begin(), list.end(), v);
    if (it == list.end()) it = list.insert(list.end(), v);
    return static_cast<int>(it - list.begin());
  };
  std::vector<CurveSeries> curves;
  double last_step = 0;
  for (const auto& a : arms) {
    const int colour = index_of(variants, a.arm->variant);
    const int dash = index_of(groups, a.arm->group);
    std::vector<double> y;
    for (auto [step, loss] : a.losses) y.push_back(loss);
    const std::vector<double> smooth = ema_debiased(y, 0.9);
    CurveSeries ema{a.arm->name, {}, false, colour, dash, false};
    for (std::size_t i = 0; i < smooth.size(); ++i) {
      ema.points.emplace_back(a.losses[i].first, smooth[i]);
      last_step = std::max(last_step, a.losses[i].first);
    }
    curves.push_back(std::move(ema));
    curves.push_back(CurveSeries{"", a.val_losses, false, colour, dash, true});
  }
  const std::string title = "training loss (EMA 0.9; circles: validation): " + plan.name;
  std::ofstream(out / "loss.svg") << line_chart_svg(curves, title, "step", "loss (nats/token)");
  std::ofstream(out / "loss_zoom.svg")
      << line_chart_svg(curves, title + ", last half", "step", "loss (nats/token)",
                        ChartOptions{last_step / 2});
  std::vector<IntervalColumn> columns;
  for (const auto& s : summaries) {
    IntervalColumn c{s.variant, {}, s.ce.mean, s.ce.lo, s.ce.hi, s.ce.n >= 2};
    for (const auto& p : s.pairs) c.values.emplace_back(p.group, p.d_ce);
    columns.push_back(std::move(c));
  }
  if (!columns.empty())
    std::ofstream(out / "delta_ce.svg")
        << interval_chart_svg(columns, "ΔCE against the seed's BF16 arm: " + plan.name,
                              "ΔCE (nats)");
}

}  // namespace

void write_study_record(const StudyPlan& plan, const StudyRunOptions& o) {
  // Finished arms whose reference finished too; the others are pending.
  std::vector<ArmResult> arms;
  std::vector<std::string> pending;
  for (const auto& arm : plan.arms) {
    if (study_arm_finished(o.out, arm) && study_arm_finished(o.out, study_reference(plan, arm)))
      arms.push_back(load_arm(plan, arm, study_arm_dir(o.out, arm)));
    else
      pending.push_back(arm.name);
  }
  FP8LAB_CHECK(!arms.empty(), "study '{}': no arm has finished yet, nothing to record", plan.name);
  // Deltas are against each arm's reference: the control, or its seed group's bf16 arm.
  auto reference_of = [&](const ArmResult& a) -> const ArmResult& {
    const StudyArm& ref = study_reference(plan, *a.arm);
    for (const auto& r : arms) {
      if (r.arm == &ref) return r;
    }
    FP8LAB_FAIL(ErrorKind::internal, "no results for reference arm '{}'", ref.name);
  };
  const ArmResult* control = &reference_of(arms.front());
  for (const auto& a : arms) {
    if (a.arm->name == plan.control) control = &a;
  }
  std::vector<record::SeedPair> pairs;
  std::vector<std::vector<record::SeedPair>> score_pairs(plan.scores.size());
  std::vector<record::PairGaps> gaps;
  std::vector<record::Fp8GapSplit> fp8_splits;

  const SourceInfo source = git_source_info(o.source_dir);
  const json control_config =
      read_json_file(study_arm_dir(o.out, *control->arm) / "run" / "config.json");
  std::vector<std::vector<std::string>> rows;
  json results = json::array();
  double total_flops = 0;
  for (const auto& a : arms) {
    const ArmResult& ref = reference_of(a);
    const auto& e = a.own_eval;
    const double ce = e.at("ce_nats").get<double>(), bpb = e.at("bits_per_byte").get<double>();
    const double peak = a.run.at("peak_mib").get<double>();
    const double c_ce = ref.own_eval.at("ce_nats").get<double>();
    const double c_bpb = ref.own_eval.at("bits_per_byte").get<double>();
    const bool is_control = &a == &ref;
    std::string role = is_control           ? "control"
                       : a.arm->resource_only ? "resource"
                       : a.arm->null_arm      ? "null"
                                              : "candidate";
    if (!is_control && !a.arm->resource_only) {
      // The arm against its reference under one scoring (an `fp8lab eval` JSON each).
      const auto pair_of = [&](const json& mine, const json& theirs) {
        return record::SeedPair{
            a.arm->variant,
            a.arm->group,
            a.arm->name,
            a.arm->null_arm,
            mine.at("ce_nats").get<double>() - theirs.at("ce_nats").get<double>(),
            mine.at("bits_per_byte").get<double>() - theirs.at("bits_per_byte").get<double>(),
            a.arm->policy != "bf16"};
      };
      pairs.push_back(pair_of(a.own_eval, ref.own_eval));
      if (pairs.back().fp8)  // an FP8 arm (a null arm is bf16)
        fp8_splits.push_back(
            {a.arm->variant, pairs.back().d_ce,
             a.bf16_eval.at("ce_nats").get<double>() - ref.bf16_eval.at("ce_nats").get<double>()});
      gaps.push_back({a.arm->variant, record::validation_gaps(a.val_losses, ref.val_losses)});
      for (std::size_t k = 0; k < plan.scores.size(); ++k)
        score_pairs[k].push_back(pair_of(a.scores[k], ref.scores[k]));
    }
    if (!a.arm->group.empty()) role += " (" + a.arm->group + ")";
    const double tokens = json_value_or(a.run, "tokens_seen", 0.0, "run.json of " + a.arm->name);
    const double ref_seconds_per_token =
        ref.train_seconds /
        std::max(json_value_or(ref.run, "tokens_seen", 0.0, "run.json of " + ref.arm->name), 1.0);
    const double flops = flops_for(control_config, tokens);
    total_flops += flops;
    rows.push_back({a.arm->name, role, a.arm->variant, fmt::format("{:.4f}", ce),
                    fmt::format("{:.3f}", e.at("perplexity").get<double>()),
                    fmt::format("{:.4f}", bpb),
                    fmt::format("{:.4f}", a.bf16_eval.at("ce_nats").get<double>()),
                    fmt::format("{:.1f}", a.train_seconds), fmt::format("{:.3g}", tokens),
                    fmt::format("{:.1f}", peak),
                    is_control || a.arm->resource_only ? "—" : signed_delta(ce, c_ce, "{:+.4f}"),
                    is_control || a.arm->resource_only ? "—" : signed_delta(bpb, c_bpb, "{:+.4f}"),
                    is_control || !same_device(a, ref)
                        ? "—"
                        : percent_delta(a.train_seconds / tokens, ref_seconds_per_token),
                    is_control ? "—" : percent_delta(peak, ref.run.at("peak_mib").get<double>())});
    results.push_back({{"arm", a.arm->name},
                       {"role", role},
                       {"group", a.arm->group},
                       {"reference", ref.arm->name},
                       {"policy", a.arm->policy},
                       {"recipe", a.arm->recipe},
                       {"fp8_wgrad", a.arm->fp8_wgrad},
                       {"variant", a.arm->variant},
                       {"mlp_recompute", a.arm->mlp_recompute},
                       {"eval_own_policy", a.own_eval},
                       {"eval_bf16", a.bf16_eval},
                       {"train_seconds", a.train_seconds},
                       {"peak_mib", peak},
                       {"device", a.device},
                       {"source_commit", a.commit},
                       {"final_train_loss", a.run.at("final_loss")},
                       {"init_sha256", a.run.at("init_sha256")},
                       {"tokens_seen", tokens},
                       {"train_flops", flops}});
    for (std::size_t k = 0; k < plan.scores.size(); ++k)
      results.back()["scores"][plan.scores[k].name] = a.scores[k];
  }

  std::string md = fmt::format(
      "# Study `{}`\n\nRecord written at commit `{}`{}. Every arm started from the "
      "same weights and data settings as its reference (checked); the control's "
      "weights: `{}`.\n\n",
      plan.name, source.commit, source.dirty ? " (with uncommitted changes)" : "",
      control->run.at("init_sha256").get<std::string>());
  if (!pending.empty()) {
    std::string names;
    for (const auto& n : pending) names += (names.empty() ? "`" : ", `") + n + "`";
    md += fmt::format("**Partial record: {} of {} arms pending** ({}); `fp8lab study` with the same "
                      "config and --out resumes them.\n\n",
                      pending.size(), plan.arms.size(), names);
  }
  md += markdown_table({"arm", "role", "variant", "CE (nats, excl. specials)", "PPL", "BPB", "CE under bf16",
                        "train s", "tokens", "peak MiB", "ΔCE", "ΔBPB", "Δtime/token", "Δpeak"},
                       rows);
  md += fmt::format("\nCE, PPL and BPB are scored under each arm's own policy; \"CE under bf16\" scores the same "
                    "weights with every linear in BF16. Deltas are against the control `{}` (arms of a seed group: against that group's bf16 arm). Train seconds are "
                    "wall-clock seconds of the training process (model set-up included); peak MiB is the "
                    "trainer's peak backend memory; Δtime/token compares training seconds per token. A resource arm "
                    "measures time and memory only (it may train fewer steps), so its loss is not compared. Training compute: {:.3g} FLOPs in all "
                    "(6·N per token plus attention and the LM head).\n\n![loss curves](loss.svg)\n\n"
                    "![the last half, zoomed](loss_zoom.svg)\n",
                    plan.control, total_flops);
  md += provenance_markdown(arms);
  const std::vector<record::VariantSummary> summaries = record::summarise_pairs(pairs);
  md += record::seed_pairs_markdown(summaries);
  if (!summaries.empty()) md += "\n![ΔCE per seed pair](delta_ce.svg)\n";
  json score_json = json::object();
  std::vector<record::ScoringSummaries> scorings{{"", summaries}};
  for (std::size_t k = 0; k < plan.scores.size(); ++k) {
    const auto score_summaries = record::summarise_pairs(score_pairs[k]);
    std::string args;
    for (const auto& arg : plan.scores[k].eval_args) args += (args.empty() ? "" : " ") + arg;
    md += record::seed_pairs_markdown(score_summaries, plan.scores[k].name, args);
    score_json[plan.scores[k].name] = record::seed_pairs_json(score_summaries);
    scorings.push_back({plan.scores[k].name, score_summaries});
  }
  md += record::fp8_gap_split_markdown(fp8_splits);
  md += record::noise_by_scoring_markdown(scorings);
  md += record::gaps_by_step_markdown(gaps);
  md += resource_check_markdown(o.out / "resource_check.json");
  std::ofstream(o.out / "results.md") << md;
  std::ofstream(o.out / "results.json")
      << json{{"study", plan.name},
              {"control", plan.control},
              {"arms", results},
              {"pending", pending},
              {"seed_pairs", record::seed_pairs_json(summaries)},
              {"score_seed_pairs", score_json},
              {"fp8_gap_split", record::fp8_gap_split_json(fp8_splits)},
              {"total_train_flops", total_flops}}
             .dump(2)
      << "\n";

  write_loss_charts(plan, arms, summaries, o.out);

  json manifest{{"study", plan.name}, {"git_commit", source.commit}, {"git_dirty", source.dirty},
                {"config_file", o.config_file.string()}, {"files", json::object()}};
  if (!o.config_file.empty() && fs::exists(o.config_file)) {
    manifest["config_sha256"] = sha256_file(o.config_file);
  }
  for (std::size_t i = 0; i + 1 < plan.eval_args.size(); ++i) {
    if (plan.eval_args[i] != "--data") continue;
    fs::path data = plan.eval_args[i + 1];
    if (fs::is_directory(data)) data /= "manifest.json";
    if (fs::exists(data)) manifest["data_manifest_sha256"] = sha256_file(data);
  }
  for (const char* f : {"study.json", "results.md", "results.json", "loss.svg", "loss_zoom.svg"}) {
    manifest["files"][f] = sha256_file(o.out / f);
  }
  if (fs::exists(o.out / "delta_ce.svg"))
    manifest["files"]["delta_ce.svg"] = sha256_file(o.out / "delta_ce.svg");
  for (const char* f : {"resource_check.json", "resource_check.log"}) {
    if (fs::exists(o.out / f)) manifest["files"][f] = sha256_file(o.out / f);
  }
  hash_tree(o.out, o.out / "arms", manifest["files"]);
  std::ofstream(o.out / "manifest.json") << manifest.dump(2) << "\n";
}

}  // namespace fp8lab
