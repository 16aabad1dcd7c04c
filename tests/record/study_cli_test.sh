#!/usr/bin/env bash
# End to end: `fp8lab study` on a small synthetic corpus. Checks the record bundle, that an
# interrupted study resumes without re-running finished arms (and gives the same results), and
# that an arm which does not start from the control's weights aborts the study.
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
grep -q '| fp8-mlp | candidate | fp8-mlp |' "$work/out/results.md" || fail "results table lacks the candidate row"
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
grep -q '| fp8-mlp-seed7 | candidate (seed7) | fp8-mlp |' "$work/out/results.md" || fail "seed group row missing"
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

# An arm whose seed differs does not start from the control's weights: the study aborts.
python3 - "$work/study.json" "$work/bad.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["arms"][1]["train_args"] = ["--set", "train.seed=99"]
json.dump(s, open(sys.argv[2], "w"))
PY
if "$fp8lab" study "$work/bad.json" --out "$work/bad" > "$work/bad.log" 2>&1; then
  fail "an unmatched arm was accepted"
fi
grep -q "not matched" "$work/bad.log" || fail "no clear message for an unmatched arm: $(tail -3 "$work/bad.log")"
echo "study CLI end to end: 1 passed, 0 failed"
