#!/usr/bin/env bash
# The command-line conventions of docs/cli.md: every subcommand's --help shows an example, and
# --json prints one line of JSON on stdout (nothing else there) while --json-file writes the same
# object, checked on tiny CPU inputs for each subcommand that runs in seconds.
# Usage: conventions_cli_test.sh FP8LAB_BINARY WORKDIR
set -euo pipefail
fp8lab=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
source "$(dirname "$0")/../common/cli_test_lib.sh"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=passive

# The subcommands a --help lists (CLI11: the indented names under "Subcommands:").
subcommands() {
  "$fp8lab" "$@" --help | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}'
}

# Whether the --help of `fp8lab ARGS` shows an example. The whole text is read first: `grep -q`
# on a pipe would exit at the first match and, under pipefail, fail the pipeline whenever
# fp8lab is still writing the rest (SIGPIPE).
has_example() {
  local text
  text=$("$fp8lab" "$@" --help) || return 1
  [[ $text == *Example* ]]
}

# 1. Every --help, nested ones included, has an example line.
helps=0
top=$(subcommands)
[ -n "$top" ] || fail "fp8lab --help lists no subcommands"
has_example || fail "fp8lab --help has no example"
for cmd in $top; do
  has_example "$cmd" || fail "fp8lab $cmd --help has no example"
  helps=$((helps + 1))
  for sub in $(subcommands "$cmd"); do
    has_example "$cmd" "$sub" ||
      fail "fp8lab $cmd $sub --help has no example"
    helps=$((helps + 1))
  done
done
[ "$helps" -ge 15 ] || fail "only $helps subcommands' --help checked"

# json_check NAME ARGS...: runs `fp8lab ARGS --json --json-file NAME.json`; stdout must be
# exactly one line holding one JSON object, and NAME.json the same object.
json_check() {
  local name=$1; shift
  "$fp8lab" "$@" --json --json-file "$work/$name.json" > "$work/$name.out" 2> "$work/$name.err" ||
    fail "$name: fp8lab $* --json exited $?: $(tail -3 "$work/$name.err")"
  python3 - "$work/$name.out" "$work/$name.json" "$name" <<'PY' || fail "$name: --json output"
import json, sys
out, file, name = sys.argv[1:]
text = open(out, encoding="utf-8").read()
assert text.endswith("\n") and text.count("\n") == 1, f"{name}: stdout is not one line: {text[:300]!r}"
j = json.loads(text)
assert isinstance(j, dict) and j, f"{name}: stdout is not a JSON object"
assert json.load(open(file)) == j, f"{name}: --json-file differs from stdout"
PY
}

# jq_check NAME EXPRESSION: a Python expression over j (the JSON of NAME) must hold.
jq_check() {
  python3 -c "import json, sys; j = json.load(open(sys.argv[1])); assert $2, sys.argv[2]" \
    "$work/$1.json" "$2" || fail "$1: $2 does not hold"
}

# data: prepare (the corpus the others use), pack, unpack.
byte_word_corpus "$fp8lab" "$work" 12 150
json_check prepare data prepare --tokenizer byte --input "$work/txt" --split hash \
  --heldout-fraction 0.25 --out "$work/data" --quiet
jq_check prepare "j['documents'] == 12 and 'train' in j['splits'] and j['manifest'].endswith('manifest.json')"
"$fp8lab" data prepare --tokenizer byte --input "$work/txt" --out "$work/data2" --quiet \
  > "$work/prepare.txt"
grep -q "^fp8lab data prepare: 12 documents" "$work/prepare.txt" ||
  fail "data prepare's default output is not its text summary: $(head -c 200 "$work/prepare.txt")"
# One document cannot fill a held-out split: the split is written, and a warning names it.
mkdir -p "$work/one" && printf 'only one document\n' > "$work/one/a.txt"
"$fp8lab" data prepare --tokenizer byte --input "$work/one" --out "$work/one_data" --quiet \
  > /dev/null 2> "$work/one.err" || fail "data prepare of one document failed: $(cat "$work/one.err")"
grep -q "warning: split 'val' received none of the 1 documents" "$work/one.err" ||
  fail "no warning for an empty split: $(cat "$work/one.err")"
json_check pack data pack --input "$work/txt" --out "$work/txt.fp8pack" --threads 1
jq_check pack "j['documents'] == 12"
json_check unpack data unpack --in "$work/txt.fp8pack" --out "$work/unpacked"
jq_check unpack "j['documents'] == 12"

# train, then what reads its run: eval, sample, grads, export.
small=(--preset tiny --set model.d_model=32 --set model.n_layers=1 --set model.n_heads=2
       --set model.seq_len=32 --set train.micro_batch=4 --no-progress --backend cpu
       --set data.kind=shards --set data.train="$work/data")
json_check train train "${small[@]}" --steps 3 --out "$work/run"
python3 -c "import json, sys; assert json.load(open(sys.argv[1])) == json.load(open(sys.argv[2]))" \
  "$work/train.json" "$work/run/run.json" || fail "train --json is not the run's run.json"
jq_check train "j['step'] == 3"
grep -q "^fp8lab train: backend cpu" "$work/train.err" || fail "train --json: no log on stderr"
json_check eval eval --checkpoint "$work/run" --policy bf16 --data "$work/data" --backend cpu \
  --max-batches 2
json_check sample sample --checkpoint "$work/run" --prompt "the lord" --max-new-tokens 5 \
  --temperature 0 --backend cpu
jq_check sample "j['prompt'] == 'the lord' and len(j['ids']) == 5"
json_check grads grads --checkpoint "$work/run" --batch 1 --out "$work/g.safetensors"
jq_check grads "j['out'].endswith('g.safetensors') and j['loss'] > 0"
# train's and grads' memory flags (from one table): each turns on its own precision key, and
# only that one.
for flag in mlp-recompute pointwise-recompute residual-recompute qkv-recompute \
            fp8-weights-from-master; do
  "$fp8lab" train --preset tiny --policy fp8-linears "--$flag" --print-config \
    --out "$work/print" > "$work/print.json" 2> "$work/print.err" ||
    fail "train --$flag --print-config: $(tail -2 "$work/print.err")"
  python3 -c "import json, sys; p = json.load(open(sys.argv[1]))['precision']
on = sorted(k for k, v in p.items() if v is True); assert on == [sys.argv[2]], on" \
    "$work/print.json" "${flag//-/_}" || fail "train --$flag does not set precision.${flag//-/_}"
  json_check "grads_$flag" grads --checkpoint "$work/run" --batch 1 --policy fp8-linears \
    "--$flag" --out "$work/g_$flag.safetensors"
  jq_check "grads_$flag" "[k for k in ('mlp_recompute', 'pointwise_recompute', \
    'residual_recompute', 'qkv_recompute', 'fp8_weights_from_master') if j[k] is True] == \
    ['${flag//-/_}'] and j['grads'] == 'fp32'"
done
json_check export export --checkpoint "$work/run" --out "$work/hf"
jq_check export "'model.safetensors' in j['files']"

# quantize and tokenize: --json-file alone keeps the text on stdout.
python3 - "$work/x.npy" <<'PY'
import struct, sys
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8), }"
header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
data = struct.pack("<32f", *[(i - 13) / 7 for i in range(32)])
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)
PY
json_check quantize quantize --in "$work/x.npy" --out "$work/q.npy"
jq_check quantize "j['shape'] == [4, 8] and j['saturated'] == 0"
"$fp8lab" quantize --in "$work/x.npy" --json-file "$work/quantize2.json" > "$work/quantize2.txt"
grep -q "^fp8lab quantize: " "$work/quantize2.txt" || fail "quantize --json-file: no text on stdout"
python3 -c "import json, sys; assert json.load(open(sys.argv[1]))['amax'] == json.load(open(sys.argv[2]))['amax']" \
  "$work/quantize.json" "$work/quantize2.json" || fail "quantize --json-file alone"
if "$fp8lab" quantize --in "$work/x.npy" --json-file "$work/x.npy" 2> "$work/err"; then
  fail "quantize --json-file over its --in was accepted"
fi
grep -q "would overwrite" "$work/err" || fail "quantize --json-file over --in: $(cat "$work/err")"
printf 'In the beginning' > "$work/text.txt"
json_check tokenize tokenize --tokenizer byte --in "$work/text.txt"
jq_check tokenize "j['count'] == 16 and j['ids'][:2] == [73, 110]"
"$fp8lab" tokenize --tokenizer byte --in "$work/text.txt" --json-file "$work/tokenize2.json" \
  > "$work/tokenize2.txt"
[ "$(cut -d' ' -f1-2 "$work/tokenize2.txt")" = "73 110" ] || fail "tokenize --json-file: stdout"
cmp -s <(python3 -c "import json, sys; print(json.load(open(sys.argv[1])))" "$work/tokenize.json") \
  <(python3 -c "import json, sys; print(json.load(open(sys.argv[1])))" "$work/tokenize2.json") ||
  fail "tokenize --json-file alone differs"

json_check linear_check linear-check --m 64 --k 64 --n 64 --repeats 1
jq_check linear_check "[r['policy'] for r in j['results']] == ['bf16', 'fp8']"

# bench model on the CPU; the old `--json FILE` form is refused, not taken for a flag.
bench=(bench model --backend cpu --preset tiny --set model.d_model=32 --set model.n_layers=1
       --set model.n_heads=2 --seq-len 32 --batch 2 --repeats 1 --warmup 0 --warmup-s 0
       --arms bf16 --no-step)
json_check bench_model "${bench[@]}"
if "$fp8lab" "${bench[@]}" --json "$work/old.json" > /dev/null 2>&1; then
  fail "bench model --json FILE was accepted"
fi
echo "conventions_cli_test: all checks passed ($helps --help pages)"
