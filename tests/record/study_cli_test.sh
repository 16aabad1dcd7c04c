#!/usr/bin/env bash
# End to end: `fp8lab study` on a small synthetic corpus. Checks the record bundle, that an
# interrupted study resumes without re-running finished arms (and gives the same results), and
# that an arm which does not start from the control's weights aborts the study, and how a
# config may change a study that has run (arms added at the end, pending arms dropped).
# Usage: study_cli_test.sh FP8LAB_BINARY WORKDIR
set -euo pipefail
fp8lab=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
source "$(dirname "$0")/../common/cli_test_lib.sh"
byte_word_corpus "$fp8lab" "$work" 24 300

cat > "$work/study.json" <<JSON
{"name": "cli-test",
 "train_args": ["--preset", "tiny", "--steps", "4", "--set", "model.d_model=32", "--set", "model.n_layers=1",
                "--set", "model.n_heads=2", "--set", "model.seq_len=32", "--set", "train.micro_batch=4",
                "--set", "data.kind=shards", "--set", "data.train=$work/data"],
 "eval_args": ["--data", "$work/data", "--max-batches", "3"],
 "resource_check_args": ["--backend", "cpu", "--preset", "tiny", "--set", "model.d_model=32",
                         "--set", "model.n_layers=1", "--set", "model.n_heads=2", "--seq-len", "32",
                         "--batch", "4", "--repeats", "2", "--warmup", "0",
                         "--warmup-s", "0"],
 "arms": [{"name": "bf16", "policy": "bf16"},
          {"name": "fp8-mlp", "policy": "fp8-mlp"},
          {"name": "bf16-recompute", "policy": "bf16", "mlp_recompute": true, "resource_only": true},
          {"name": "bf16-seed7", "policy": "bf16", "group": "seed7", "train_args": ["--set", "train.seed=7"]},
          {"name": "fp8-mlp-seed7", "policy": "fp8-mlp", "group": "seed7", "train_args": ["--set", "train.seed=7"]}]}
JSON
"$fp8lab" study "$work/study.json" --out "$work/out" > "$work/first.log"
for f in study.json results.md results.json loss.svg manifest.json; do
  [ -s "$work/out/$f" ] || fail "missing $f"
done
for arm in bf16 fp8-mlp bf16-recompute bf16-seed7 fp8-mlp-seed7; do
  [ -e "$work/out/arms/$arm/DONE" ] || fail "arm $arm not finished"
done
[ -e "$work/out/arms/fp8-mlp/eval_bf16.json" ] || fail "fp8-mlp not scored under bf16"
grep -q '| fp8-mlp | candidate | fp8-mlp tensorwise |' "$work/out/results.md" || fail "results table lacks the candidate row"
grep -q '<polyline' "$work/out/loss.svg" || fail "loss.svg has no curve"
grep -q '## Frozen resource check' "$work/out/results.md" || fail "results.md lacks the resource check"
python3 - "$work/out/resource_check.json" <<'PY' || fail "resource check JSON incomplete"
import json, sys
r = json.load(open(sys.argv[1]))
arms = [a["arm"] for a in r["arms"]]
assert arms == ["bf16", "fp8-mlp", "bf16+recompute"], arms
assert len({a["weights_sha256"] for a in r["arms"]}) == 1, "arms saw different weights"
assert all(a["frozen"]["median_ms"] > 0 and a["step"]["peak_mib"] > 0 for a in r["arms"])
PY
inits=$(grep -ho '"init_sha256": *"[0-9a-f]*"' "$work"/out/arms/{bf16,fp8-mlp,bf16-recompute}/run/run.json | sort -u | wc -l)
[ "$inits" = 1 ] || fail "the control's group started from $inits different weights"
inits=$(grep -ho '"init_sha256": *"[0-9a-f]*"' "$work"/out/arms/*/run/run.json | sort -u | wc -l)
[ "$inits" = 2 ] || fail "two seed groups should give two initial weights, got $inits"
grep -q '| fp8-mlp-seed7 | candidate (seed7) | fp8-mlp tensorwise |' "$work/out/results.md" || fail "seed group row missing"
cp "$work/out/results.json" "$work/first-results.json"

# Interrupt: the candidate lost its scoring and DONE, the resource arm lost everything after
# its checkpoint. Resuming must keep the control untouched and finish the rest identically.
control_log_lines=$(wc -l < "$work/out/arms/bf16/train.log")
rm "$work/out/arms/fp8-mlp/DONE" "$work/out/arms/fp8-mlp/eval_fp8-mlp.json"
rm "$work/out/arms/bf16-recompute/DONE" "$work/out/arms/bf16-recompute/eval_bf16.json"
"$fp8lab" study "$work/study.json" --out "$work/out" > "$work/second.log"
grep -q '\[1/5 bf16\] finished earlier: kept' "$work/second.log" || fail "control was not kept"
[ "$(wc -l < "$work/out/arms/bf16/train.log")" = "$control_log_lines" ] || fail "control retrained"
python3 - "$work/first-results.json" "$work/out/results.json" <<'PY' || fail "resumed results differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
key = lambda r: (r["arm"], r["eval_own_policy"]["ce_nats"], r["eval_bf16"]["ce_nats"], r["init_sha256"])
assert [key(r) for r in a["arms"]] == [key(r) for r in b["arms"]], (a, b)
PY

# A different config in the same directory is refused.
sed 's/"--steps", "4"/"--steps", "5"/' "$work/study.json" > "$work/other.json"
if "$fp8lab" study "$work/other.json" --out "$work/out" > "$work/other.log" 2>&1; then
  fail "a different config was accepted in an existing study directory"
fi
grep -q "another config" "$work/other.log" || fail "no clear message for a foreign study directory"

# A config that only adds arms at the end grows the study: the finished arms are kept, the new
# seed group trains beside them and joins the record; one that also reorders the arms is refused.
python3 - "$work/study.json" "$work/grown.json" "$work/reordered.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["arms"] += [{"name": "bf16-seed9", "policy": "bf16", "group": "seed9", "train_args": ["--set", "train.seed=9"]},
              {"name": "fp8-mlp-seed9", "policy": "fp8-mlp", "group": "seed9", "train_args": ["--set", "train.seed=9"]}]
json.dump(s, open(sys.argv[2], "w"))
s["arms"][3], s["arms"][4] = s["arms"][4], s["arms"][3]
json.dump(s, open(sys.argv[3], "w"))
PY
cp -r "$work/out" "$work/grown"
"$fp8lab" study "$work/grown.json" --out "$work/grown" > "$work/grown.log" 2>&1 ||
  fail "a config adding arms was refused: $(tail -3 "$work/grown.log")"
grep -q "the config adds 2 arms" "$work/grown.log" || fail "no line saying the config adds arms"
grep -q '\[1/7 bf16\] finished earlier: kept' "$work/grown.log" || fail "the grown study retrained the control"
[ -e "$work/grown/arms/fp8-mlp-seed9/DONE" ] || fail "the added arm did not train"
grep -q '| fp8-mlp tensorwise | 3 |' "$work/grown/results.md" || fail "the added pair is not in the record"
if "$fp8lab" study "$work/reordered.json" --out "$work/grown" > "$work/reordered.log" 2>&1; then
  fail "a config reordering the arms was accepted"
fi
grep -q "only add arms at the end" "$work/reordered.log" || fail "no clear message for reordered arms"
# A config may also drop arms that have not started (a pending rowwise arm, between the finished
# ones, here written into the directory's plan as if a run had stopped before it), not a finished
# one.
python3 - "$work/grown.json" "$work/grown/study.json" "$work/shed-finished.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
pending = dict(s, arms=s["arms"][:5] + [{"name": "fp8-mlp-rowwise", "policy": "fp8-mlp", "recipe": "rowwise"}] + s["arms"][5:])
json.dump(pending, open(sys.argv[2], "w"))
json.dump(dict(s, arms=[a for a in s["arms"] if a["name"] != "fp8-mlp-seed9"]), open(sys.argv[3], "w"))
PY
"$fp8lab" study "$work/grown.json" --out "$work/grown" > "$work/shed.log" 2>&1 ||
  fail "a config dropping a pending arm was refused: $(tail -3 "$work/shed.log")"
grep -q "the config drops 1 arm that had not started (fp8-mlp-rowwise)" "$work/shed.log" ||
  fail "no line saying the config drops the pending arm"
grep -q '\[1/7 bf16\] finished earlier: kept' "$work/shed.log" || fail "dropping an arm retrained the control"
[ ! -e "$work/grown/arms/fp8-mlp-rowwise" ] || fail "the dropped arm was trained"
grep -q fp8-mlp-rowwise "$work/grown/study.json" && fail "the dropped arm is still in the plan"
if "$fp8lab" study "$work/shed-finished.json" --out "$work/grown" > "$work/shed-finished.log" 2>&1; then
  fail "a config dropping a finished arm was accepted"
fi
grep -q "drop arms that have not started" "$work/shed-finished.log" ||
  fail "no clear message for a dropped finished arm"
# --record-only takes the same plan changes, so that a record's study.json is the plan it renders.
cp -r "$work/grown" "$work/rerecord"
python3 - "$work/grown.json" "$work/rerecord/study.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
json.dump(dict(s, arms=s["arms"] + [{"name": "bf16-null", "policy": "bf16", "null": True,
                                      "may_differ_in": ["train.loss_chunk_rows"]}]), open(sys.argv[2], "w"))
PY
"$fp8lab" study "$work/grown.json" --out "$work/rerecord" --record-only > "$work/rerecord.log" 2>&1 ||
  fail "--record-only refused a config that drops a pending arm: $(tail -3 "$work/rerecord.log")"
grep -q "the config drops 1 arm that had not started (bf16-null)" "$work/rerecord.log" ||
  fail "--record-only does not say it drops the pending arm"
grep -q bf16-null "$work/rerecord/study.json" && fail "--record-only left the dropped arm in study.json"
if "$fp8lab" study "$work/shed-finished.json" --out "$work/rerecord" --record-only > "$work/rerecord-bad.log" 2>&1; then
  fail "--record-only accepted a config that drops a finished arm"
fi

# NAME ARGS...: the study with arm 1's train_args set to ARGS, run into $work/NAME (log
# $work/NAME.log); it must exit 2, as bad input.
study_with_arm_args() {
  local name=$1; shift
  python3 - "$work/study.json" "$work/$name.json" "$@" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["arms"][1]["train_args"] = sys.argv[3:]
json.dump(s, open(sys.argv[2], "w"))
PY
  local code=0
  "$fp8lab" study "$work/$name.json" --out "$work/$name" > "$work/$name.log" 2>&1 || code=$?
  [ "$code" = 2 ] || fail "$name: exit code $code, not 2 (bad input)"
}
# An arm whose seed differs does not start from the control's weights: the study aborts.
study_with_arm_args bad --set train.seed=99
grep -q "not matched" "$work/bad.log" || fail "no clear message for an unmatched arm: $(tail -3 "$work/bad.log")"
# ... and it is refused before it trains (its resolved config already differs).
[ ! -e "$work/bad/arms/fp8-mlp/run" ] || fail "the unmatched arm was trained before being refused"
grep -q "so it is not trained" "$work/bad.log" || fail "the refusal does not say the arm was not trained"
# An arm whose own fp8lab fails: the study exits as the arm did and repeats the arm's reason.
study_with_arm_args badvalue --set train.micro_batch=zero
grep -q "^fp8lab: invalid argument: \[2/5 fp8-mlp\] .*failed (exit status 2): --set train.micro_batch: 'zero' is not a valid number value; see " \
  "$work/badvalue.log" || fail "the study does not repeat the arm's reason: $(tail -2 "$work/badvalue.log")"
# Seed pairs, a null arm and the recipes, two arms at a time: every variant's pairs, mean and
# interval in the record; the recipe reaches the trainer and the scorer.
cat > "$work/pairs.json" <<JSON
{"name": "pairs-test",
 "train_args": ["--preset", "tiny", "--steps", "3", "--set", "model.d_model=128", "--set", "model.n_layers=1",
                "--set", "model.n_heads=2", "--set", "model.seq_len=32", "--set", "train.micro_batch=4",
                "--set", "data.kind=shards", "--set", "data.train=$work/data"],
 "eval_args": ["--data", "$work/data", "--max-batches", "2"],
 "scores": [{"name": "three-batches", "eval_args": ["--data", "$work/data", "--max-batches", "3"]}],
 "arms": [{"name": "bf16", "policy": "bf16"},
          {"name": "null", "policy": "bf16", "null": true, "may_differ_in": ["train.loss_chunk_rows"],
           "train_args": ["--set", "train.loss_chunk_rows=48"]},
          {"name": "block", "policy": "fp8-mlp", "recipe": "blockwise"},
          {"name": "moments", "policy": "bf16", "variant": "bf16 bf16-moments",
           "may_differ_in": ["optim.moments"], "train_args": ["--set", "optim.moments=bf16"]},
          {"name": "moments-s2", "policy": "bf16", "variant": "bf16 bf16-moments", "group": "s2",
           "may_differ_in": ["optim.moments"],
           "train_args": ["--set", "train.seed=2", "--set", "optim.moments=bf16"]},
          {"name": "bf16-s2", "policy": "bf16", "group": "s2", "train_args": ["--set", "train.seed=2"]},
          {"name": "null-s2", "policy": "bf16", "null": true, "group": "s2", "may_differ_in": ["train.loss_chunk_rows"],
           "train_args": ["--set", "train.seed=2", "--set", "train.loss_chunk_rows=48"]},
          {"name": "block-s2", "policy": "fp8-mlp", "recipe": "blockwise", "group": "s2",
           "train_args": ["--set", "train.seed=2"]}]}
JSON
"$fp8lab" study "$work/pairs.json" --out "$work/pairs" --gpus 0,1 > "$work/pairs.log" 2>&1 ||
  fail "the seed-pair study failed: $(tail -5 "$work/pairs.log")"
grep -q "gpu 1\]" "$work/pairs.log" || fail "no arm ran on the second slot"
grep -q '## Seed pairs' "$work/pairs/results.md" || fail "results.md lacks the seed pairs"
grep -q '| fp8-mlp blockwise | 2 |' "$work/pairs/results.md" || fail "blockwise pairs missing"
grep -q '| bf16 null | 2 |' "$work/pairs/results.md" || fail "null pairs missing"
# A bf16 arm that differs in a listed key (AdamW's moments in bf16) is a candidate, paired with
# its group's plain bf16 arm even when listed before it.
grep -q '| bf16 bf16-moments | 2 |' "$work/pairs/results.md" || fail "bf16-moments pairs missing"
python3 - "$work/pairs" <<'PY' || fail "the bf16-moments arms are not what they say"
import json, sys
root = sys.argv[1]
assert json.load(open(root + "/arms/moments-s2/run/config.json"))["optim"]["moments"] == "bf16"
r = json.load(open(root + "/results.json"))
own = {a["arm"]: a["eval_own_policy"]["ce_nats"] for a in r["arms"]}
m = {v["variant"]: v for v in r["seed_pairs"]}["bf16 bf16-moments"]
want = [own["moments"] - own["bf16"], own["moments-s2"] - own["bf16-s2"]]
assert abs(m["d_ce"]["mean"] - sum(want) / 2) < 1e-12, (m, want)
PY
grep -q "the protocol's own noise" "$work/pairs/results.md" || fail "no noise floor line"
# The FP8 arms' gap split: the weights' part from each arm's eval_bf16.json against its
# reference's, the forward's from the arm's own two scores; FP8 variants only.
grep -q "## Where the FP8 arms' gap lies" "$work/pairs/results.md" || fail "no gap split section"
python3 - "$work/pairs" <<'PY' || fail "the FP8 gap split is wrong"
import json, sys
root = sys.argv[1]
r = json.load(open(root + "/results.json"))
own = {a["arm"]: a["eval_own_policy"]["ce_nats"] for a in r["arms"]}
bf = {a["arm"]: a["eval_bf16"]["ce_nats"] for a in r["arms"]}
split = r["fp8_gap_split"]
assert [v["variant"] for v in split] == ["fp8-mlp blockwise"], split
v = split[0]
weights = [bf["block"] - bf["bf16"], bf["block-s2"] - bf["bf16-s2"]]
forward = [own["block"] - bf["block"], own["block-s2"] - bf["block-s2"]]
assert v["pairs"] == 2 and v["weights"]["n"] == 2, v
assert abs(v["weights"]["mean"] - sum(weights) / 2) < 1e-12, (v, weights)
assert abs(v["forward"]["mean"] - sum(forward) / 2) < 1e-12, (v, forward)
PY
# The further scoring: every arm scored again, its own seed-pair section from those files.
[ -s "$work/pairs/arms/block-s2/score_three-batches.json" ] || fail "an arm lacks its further scoring"
grep -q '## Seed pairs, scored by `three-batches`' "$work/pairs/results.md" || fail "no section for the further scoring"
grep -q "## The protocol's noise, by scoring" "$work/pairs/results.md" || fail "no noise table by scoring"
grep -q '| `three-batches` | 2 |' "$work/pairs/results.md" || fail "the noise table lacks the further scoring"
python3 - "$work/pairs" <<'PY' || fail "the further scoring's pairs are wrong"
import json, sys
root = sys.argv[1]
r = json.load(open(root + "/results.json"))
ce = {a: json.load(open(f"{root}/arms/{a}/score_three-batches.json"))["ce_nats"]
      for a in ("bf16", "block", "bf16-s2", "block-s2")}
b = {v["variant"]: v for v in r["score_seed_pairs"]["three-batches"]}["fp8-mlp blockwise"]
want = [ce["block"] - ce["bf16"], ce["block-s2"] - ce["bf16-s2"]]
assert abs(b["d_ce"]["mean"] - sum(want) / 2) < 1e-12, (b, want)
PY
grep -c '<circle' "$work/pairs/delta_ce.svg" | grep -q '^[4-9]' || fail "delta_ce.svg lacks the four pairs"
grep -q 'stroke-dasharray' "$work/pairs/loss.svg" || fail "loss.svg tells seed groups apart by colour only"
grep -q '<polyline' "$work/pairs/loss_zoom.svg" || fail "no zoomed loss chart"
python3 - "$work/pairs" <<'PY' || fail "recipe not recorded or pairs wrong"
import json, sys
root = sys.argv[1]
cfg = json.load(open(root + "/arms/block/run/config.json"))
assert cfg["precision"]["fp8_recipe"] == "blockwise", cfg["precision"]
ev = json.load(open(root + "/arms/block/eval_fp8-mlp.json"))
assert ev["fp8_recipe"] == "blockwise", ev
r = json.load(open(root + "/results.json"))
pairs = {v["variant"]: v for v in r["seed_pairs"]}
b = pairs["fp8-mlp blockwise"]
own = {a["arm"]: a["eval_own_policy"]["ce_nats"] for a in r["arms"]}
want = [own["block"] - own["bf16"], own["block-s2"] - own["bf16-s2"]]
assert abs(b["d_ce"]["mean"] - sum(want) / 2) < 1e-12, (b, want)
assert b["d_ce"]["lo95"] < b["d_ce"]["mean"] < b["d_ce"]["hi95"], b
PY
# A partial record: an unfinished arm is listed as pending, the rest still rendered.
rm "$work/pairs/arms/block-s2/DONE"
"$fp8lab" study "$work/pairs.json" --out "$work/pairs" --record-only > /dev/null
grep -q 'Partial record: 1 of 8 arms pending' "$work/pairs/results.md" || fail "no pending line"
grep -q '| fp8-mlp blockwise | 1 |' "$work/pairs/results.md" || fail "partial pairs wrong"
# Each arm records its device; times compare only on one device.
grep -q '^Every arm trained on .* threads)\.$' "$work/pairs/results.md" || fail "no device line"
grep -q '^Every arm trained at commit `\([0-9a-f]\{40\}\|unknown\)\( dirty\)\?`\.$' "$work/pairs/results.md" ||
  fail "no commit line"
python3 - "$work/pairs" <<'PY' || fail "could not move an arm to another device"
import json, sys
p = sys.argv[1] + "/arms/block/run/run.json"
r = json.load(open(p))
assert r["device"].endswith("threads)"), r["device"]
r["device"] = "Another GPU"
json.dump(r, open(p, "w"))
PY
"$fp8lab" study "$work/pairs.json" --out "$work/pairs" --record-only > /dev/null
grep -q '^Devices: .*; Another GPU (`block`)\. Δtime/token is given only' "$work/pairs/results.md" ||
  fail "no devices line for two devices"
python3 - "$work/pairs/results.md" <<'PY' || fail "a time delta across devices was given"
import sys
rows = {l.split("|")[1].strip(): [c.strip() for c in l.split("|")[1:-1]]
        for l in open(sys.argv[1]) if l.startswith("| ") and not l.startswith("| arm ")}
assert rows["block"][12] == "—", rows["block"]       # other device: no Δtime/token
assert rows["null"][12] not in ("—", ""), rows["null"]  # same device as its reference
PY
# An unknown recipe is refused before anything trains.
sed 's/"blockwise"/"columnwise"/' "$work/pairs.json" > "$work/badrecipe.json"
if "$fp8lab" study "$work/badrecipe.json" --out "$work/badrecipe" > "$work/badrecipe.log" 2>&1; then
  fail "an unknown recipe was accepted"
fi
grep -q "columnwise" "$work/badrecipe.log" || fail "no clear message for an unknown recipe"
[ ! -e "$work/badrecipe/arms" ] || fail "a refused study wrote arms"
# --stop-after: an arm that would end past the limit is not started. The first arm has no
# estimate and trains; after it, any arm would pass 1 ms: the study stops, exit 0, the rest
# pending; the same command without the limit then finishes them, keeping the first.
"$fp8lab" study "$work/pairs.json" --out "$work/stop" --stop-after 0.001 > "$work/stop.log" 2>&1 ||
  fail "a study stopped by --stop-after did not exit 0: $(tail -3 "$work/stop.log")"
grep -q "stopped after .* 7 arms pending" "$work/stop.log" || fail "no stop line: $(tail -3 "$work/stop.log")"
[ -e "$work/stop/arms/bf16/DONE" ] || fail "the first arm did not train under --stop-after"
[ ! -e "$work/stop/arms/null" ] || fail "an arm started after the limit"
grep -q 'Partial record: 7 of 8 arms pending' "$work/stop/results.md" || fail "stopped study has no partial record"
# The finished arm's config as an fp8lab from before the "kernels" section and optim.moments
# wrote it: the arms trained now must still match it (keys it lacks hold their defaults).
python3 - "$work/stop/arms/bf16/run/config.json" <<'PY' || fail "could not age the config"
import json, sys
c = json.load(open(sys.argv[1]))
del c["kernels"], c["optim"]["moments"]
json.dump(c, open(sys.argv[1], "w"), indent=2)
PY
"$fp8lab" study "$work/pairs.json" --out "$work/stop" --stop-after 100000 > "$work/stop2.log" 2>&1 ||
  fail "continuing a stopped study failed: $(tail -3 "$work/stop2.log")"
grep -q '\[1/8 bf16\] finished earlier: kept' "$work/stop2.log" || fail "the stopped study's arm was not kept"
grep -q '^\[study\] 7 arms to train: about [0-9hms]* at [0-9hms]* an arm' "$work/stop2.log" ||
  fail "no time-left line: $(grep -m1 '\[study\]' "$work/stop2.log")"
grep -q '^\[study\] 1 arm to train' "$work/stop2.log" || fail "no time-left line before the last arm"
! grep -q 'Partial record' "$work/stop/results.md" || fail "the continued study is still partial"
# Group by group, each reference first: a study cut short leaves whole groups of pairs.
python3 - "$work/stop2.log" <<'PY' || fail "the arms did not run group by group: $(grep -o '\[[0-9]*/8 [a-z0-9-]*\]' "$work/stop2.log" | uniq | tr '\n' ' ')"
import re, sys
seen = []
for name in re.findall(r"\[\d+/8 ([a-z0-9-]+)\]", open(sys.argv[1]).read()):
    if name not in seen:
        seen.append(name)
assert seen == ["bf16", "null", "block", "moments", "bf16-s2", "moments-s2", "null-s2", "block-s2"], seen
PY
code=0
"$fp8lab" study "$work/pairs.json" --out "$work/stop" --stop-after -5 > "$work/negstop.log" 2>&1 || code=$?
[ "$code" = 2 ] || fail "a negative --stop-after: exit code $code, not 2"
grep -q -- "--stop-after -5: the seconds must be a positive number" "$work/negstop.log" ||
  fail "no clear message for a negative --stop-after: $(tail -1 "$work/negstop.log")"
# --record-only where no study trained: a clear refusal, and no directory left behind.
code=0
"$fp8lab" study "$work/pairs.json" --out "$work/nostudy" --record-only > "$work/nostudy.log" 2>&1 || code=$?
[ "$code" = 2 ] || fail "--record-only without arms: exit code $code, not 2"
grep -q "holds no study arms to record" "$work/nostudy.log" ||
  fail "no clear message for --record-only without arms: $(tail -1 "$work/nostudy.log")"
[ ! -e "$work/nostudy" ] || fail "--record-only without arms wrote $work/nostudy"
echo "study CLI end to end: 1 passed, 0 failed"
