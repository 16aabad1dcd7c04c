#!/usr/bin/env bash
# kill -9 at random moments, then --resume, until the run completes: the final weights must be
# bit-identical to an uninterrupted run's, metrics.jsonl must hold each step once, and `latest`
# must name a complete checkpoint after every kill (checkpoint_every=1, so many kills land in a
# save). Ends with kills during re-saves of the final step. Prints the seed of its random delays.
# Usage: kill_resume_test.sh FP8LAB_BINARY WORKDIR [KILLS]
set -euo pipefail
fp8lab=$1
work=$2
kills=${3:-16}
seed=${KILL_TEST_SEED:-$(( $(date +%s%N) % 32768 ))}
RANDOM=$seed
echo "kill/resume test: seed $seed (KILL_TEST_SEED=$seed reproduces the delays), $kills kills"
rm -rf "$work" && mkdir -p "$work"
# Debian's python3 (numpy from scripts/setup) before any other on PATH.
python=/usr/bin/python3; [ -x "$python" ] || python=python3
fail() { echo "FAIL (seed $seed): $*" >&2; exit 1; }
args=(--preset tiny --steps 60 --set model.d_model=32 --set model.n_layers=1 --set model.n_heads=2
      --set model.seq_len=16 --set train.micro_batch=2 --set train.grad_accum=2
      --set train.checkpoint_every=1 --set train.keep_checkpoints=2 --no-progress)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=passive

final_sha() { "$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["final_params_sha256"])' "$1/run.json"; }
check_latest() {  # the checkpoint `latest` names exists with all three files
  local ck="$1/checkpoints"
  [ -e "$ck/latest" ] || return 0
  local name; name=$(tr -d '\n' < "$ck/latest")
  for f in meta.json model.safetensors optimizer.safetensors; do
    [ -s "$ck/$name/$f" ] || fail "after a kill, latest names $name but $name/$f is missing"
  done
}

"$fp8lab" train "${args[@]}" --out "$work/straight" > "$work/straight.log"
expected=$(final_sha "$work/straight")

run="$work/killed"
done_kills=0
while [ "$done_kills" -lt "$kills" ]; do
  resume=(); [ -e "$run/checkpoints/latest" ] && resume=(--resume)
  "$fp8lab" train "${args[@]}" --out "$run" "${resume[@]}" >> "$work/killed.log" 2>&1 &
  pid=$!
  # 20..420 ms: from start-up (before the first checkpoint) to several steps and saves in.
  sleep "0.$(printf '%03d' $(( 20 + RANDOM % 400 )))"
  if kill -9 "$pid" 2>/dev/null; then done_kills=$((done_kills + 1)); fi
  wait "$pid" 2>/dev/null || true
  check_latest "$run"
  if [ -e "$run/run.json" ] && grep -q '"completed"' "$run/run.json"; then break; fi
done
resume=(); [ -e "$run/checkpoints/latest" ] && resume=(--resume)
"$fp8lab" train "${args[@]}" --out "$run" "${resume[@]}" >> "$work/killed.log" 2>&1 ||
  fail "the final resume failed: $(tail -3 "$work/killed.log")"
[ "$(final_sha "$run")" = "$expected" ] || fail "resumed weights differ from the uninterrupted run's"
"$python" - "$run/metrics.jsonl" <<'PY' || fail "metrics.jsonl does not hold steps 1..60 once each"
import json, sys
steps = [json.loads(l)["step"] for l in open(sys.argv[1])]
assert steps == list(range(1, 61)), steps
PY

# Re-saving the final step (a resume of a finished run saves step 60 again), killed anywhere.
for i in 1 2 3 4; do
  "$fp8lab" train "${args[@]}" --out "$run" --resume >> "$work/killed.log" 2>&1 &
  pid=$!
  sleep "0.$(printf '%03d' $(( 20 + RANDOM % 250 )))"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  check_latest "$run"
done
"$fp8lab" train "${args[@]}" --out "$run" --resume >> "$work/killed.log" 2>&1 ||
  fail "resuming after killed re-saves failed: $(tail -3 "$work/killed.log")"
[ "$(final_sha "$run")" = "$expected" ] || fail "weights changed by re-saving"
echo "kill/resume: $done_kills kills, final weights bit-identical ($expected)"
