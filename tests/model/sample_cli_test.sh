#!/usr/bin/env bash
# End to end: `fp8lab sample` on small checkpoints trained here. Text goes to stdout and is
# deterministic for a seed; bad input exits 2 with stdout empty and the offending value named;
# every CPU-capable command prints the backend it chose on its first line.
# Usage: sample_cli_test.sh FP8LAB_BINARY WORKDIR
set -euo pipefail
fp8lab=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
source "$(dirname "$0")/../common/cli_test_lib.sh"
byte_word_corpus "$fp8lab" "$work" 16 200
small=(--preset tiny --set model.d_model=32 --set model.n_layers=1 --set model.n_heads=2
       --set model.seq_len=32 --set train.micro_batch=4 --no-progress)
"$fp8lab" train "${small[@]}" --steps 12 --backend cpu --set data.kind=shards \
  --set data.train="$work/data" --out "$work/run" > "$work/train.log"
[ "$(head -1 "$work/train.log")" = "fp8lab train: backend cpu (asked for)" ] ||
  fail "train's first line: $(head -1 "$work/train.log")"
grep -q '"backend": "cpu"' "$work/run/config.json" || fail "the run does not record its backend"

# sample ARGS... > out: stdout to $work/out, stderr to $work/err, the exit code in $rc.
sample() {
  set +e
  "$fp8lab" sample "$@" > "$work/out" 2> "$work/err"
  rc=$?
  set -e
}

# Greedy, twice: the same text; the prompt first, then exactly 20 byte tokens and a newline.
sample --checkpoint "$work/run" --prompt "the lord" --max-new-tokens 20 --temperature 0
[ "$rc" = 0 ] || fail "greedy sample exited $rc: $(cat "$work/err")"
cp "$work/out" "$work/greedy1"
[ "$(head -c 8 "$work/greedy1")" = "the lord" ] || fail "stdout does not start with the prompt"
[ "$(wc -c < "$work/greedy1")" = 29 ] || fail "greedy output is $(wc -c < "$work/greedy1") bytes, not 8 + 20 + 1"
head -1 "$work/err" | grep -Eq '^fp8lab sample: backend (cpu|cuda) \(auto: ' ||
  fail "sample's first stderr line: $(head -1 "$work/err")"
sample --checkpoint "$work/run/checkpoints" --prompt "the lord" --max-new-tokens 20 \
  --temperature 0 --backend cpu
cmp -s "$work/out" "$work/greedy1" || fail "greedy sample is not repeatable"
printf 'the lord' > "$work/prompt.txt"
sample --checkpoint "$work/run" --prompt-file "$work/prompt.txt" --max-new-tokens 20 \
  --temperature 0 --backend cpu
cmp -s "$work/out" "$work/greedy1" || fail "--prompt-file gives other text than --prompt"

# Seeded sampling: the same seed the same text, another seed other text.
sample --checkpoint "$work/run" --prompt "and" --max-new-tokens 24 --temperature 1.5 --seed 5 --backend cpu
cp "$work/out" "$work/seed5a"
sample --checkpoint "$work/run" --prompt "and" --max-new-tokens 24 --temperature 1.5 --seed 5 --backend cpu
cmp -s "$work/out" "$work/seed5a" || fail "seed 5 twice gave two texts"
sample --checkpoint "$work/run" --prompt "and" --max-new-tokens 24 --temperature 1.5 --seed 6 --backend cpu
cmp -s "$work/out" "$work/seed5a" && fail "seeds 5 and 6 gave the same 24 tokens"

# A run over a 97-token vocabulary: no tokenizer of its own, and bytes >= 97 it cannot take.
"$fp8lab" train "${small[@]}" --steps 2 --backend cpu --set model.vocab_size=97 \
  --out "$work/run97" > /dev/null

# expect_bad FRAGMENT ARGS...: exit 2 (bad input; docs/cli.md), nothing on stdout, FRAGMENT on
# stderr. EXPECT_CODE overrides the code (3: a file that cannot be read).
expect_bad() {
  local fragment=$1 code=${EXPECT_CODE:-2}
  shift
  sample "$@"
  [ "$rc" = "$code" ] || fail "sample $* exited $rc, not $code"
  [ ! -s "$work/out" ] || fail "sample $* wrote to stdout: $(head -c 200 "$work/out")"
  grep -qF -- "$fragment" "$work/err" || fail "sample $*: no '$fragment' in: $(cat "$work/err")"
}
long=$(printf 'x%.0s' $(seq 1 40))
expect_bad "--max-new-tokens 0 must be at least 1" --checkpoint "$work/run" --prompt a --max-new-tokens 0
expect_bad "--max-new-tokens -4" --checkpoint "$work/run" --prompt a --max-new-tokens -4
expect_bad "the prompt is 40 tokens long, longer than the model's context of 32 tokens" \
  --checkpoint "$work/run" --prompt "$long" --max-new-tokens 1
expect_bad "at most 23 new tokens fit" --checkpoint "$work/run" --prompt "0123456789" --max-new-tokens 30
expect_bad "the prompt is empty" --checkpoint "$work/run" --prompt "" --max-new-tokens 3
expect_bad "--temperature -1" --checkpoint "$work/run" --prompt a --max-new-tokens 3 --temperature -1
expect_bad "give the prompt as --prompt TEXT or --prompt-file FILE" --checkpoint "$work/run" --max-new-tokens 3
expect_bad "excludes" --checkpoint "$work/run" --prompt a --prompt-file "$work/prompt.txt" --max-new-tokens 3
EXPECT_CODE=3 expect_bad "cannot open --prompt-file '$work/none.txt'" --checkpoint "$work/run" --prompt-file "$work/none.txt" --max-new-tokens 3
# A device is refused before it is read (it used to be read until memory ran out).
expect_bad "--prompt-file '/dev/zero' is not a regular file" --checkpoint "$work/run" --prompt-file /dev/zero --max-new-tokens 3
EXPECT_CODE=3 expect_bad "checkpoint path '$work/nowhere' does not exist" --checkpoint "$work/nowhere" --prompt a --max-new-tokens 3
expect_bad "cannot tell the tokenizer" --checkpoint "$work/run97" --prompt a --max-new-tokens 3
expect_bad "byte(s) e9 at offset 4 are byte token 233, outside the model's vocabulary of 97 ids" \
  --checkpoint "$work/run97" --tokenizer byte --prompt "$(printf 'ABCD\xe9F')" --max-new-tokens 3
# Weights from another model config in a checkpoint directory.
ckpt=$(ls -d "$work"/run/checkpoints/step_*)
cp -r "$ckpt" "$work/mixed"
cp "$(ls -d "$work"/run97/checkpoints/step_*)/model.safetensors" "$work/mixed/model.safetensors"
expect_bad "model.safetensors holds a model of another config: vocab_size 97 (meta.json: 256)" \
  --checkpoint "$work/mixed" --prompt a --max-new-tokens 3
"$fp8lab" sample --checkpoint "$work/run97" --tokenizer byte --prompt "ABC" --max-new-tokens 3 \
  --backend cpu > /dev/null 2>&1 || fail "a 97-token model with --tokenizer byte should sample"

# The first line of eval (stdout; stderr with --json, whose stdout is one JSON object) and bench.
"$fp8lab" eval --checkpoint "$work/run" --policy bf16 --data "$work/data" --backend cpu \
  > "$work/eval.txt"
[ "$(head -1 "$work/eval.txt")" = "fp8lab eval: backend cpu (asked for)" ] ||
  fail "eval's first line: $(head -1 "$work/eval.txt")"
"$fp8lab" eval --checkpoint "$work/run" --policy bf16 --data "$work/data" --backend cpu --json \
  > "$work/eval.json" 2> "$work/eval.err"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/eval.json" ||
  fail "eval --json stdout is not JSON"
grep -q "^fp8lab eval: backend cpu" "$work/eval.err" || fail "eval --json: no backend line on stderr"
"$fp8lab" bench model --backend cpu --preset tiny --set model.d_model=32 --set model.n_layers=1 \
  --set model.n_heads=2 --seq-len 32 --batch 2 --repeats 1 --warmup 0 --warmup-s 0 --arms bf16 \
  --no-step > "$work/bench.txt"
[ "$(head -1 "$work/bench.txt")" = "fp8lab bench model: backend cpu (asked for)" ] ||
  fail "bench model's first line: $(head -1 "$work/bench.txt")"
echo "sample_cli_test: all checks passed"
