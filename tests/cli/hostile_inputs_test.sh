#!/usr/bin/env bash
# The CLI against hostile inputs: each must end in a one-line error with its documented exit
# code (docs/cli.md), never a crash, and never change a user's file.
# Usage: hostile_inputs_test.sh FP8LAB_BINARY WORKDIR
set -uo pipefail
fp8lab=$1
work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=passive
failures=0
# Debian's python3 (numpy from scripts/setup) before any other on PATH.
python=/usr/bin/python3; [ -x "$python" ] || python=python3
tiny=(--preset tiny --set model.d_model=32 --set model.n_layers=1 --set model.n_heads=2
      --set model.seq_len=16 --set train.micro_batch=2 --no-progress)

# expect CODE NEEDLE -- COMMAND...: runs COMMAND, checks its exit code and that stderr has NEEDLE.
expect() {
  local code=$1 needle=$2; shift 3
  "$@" > out.txt 2> err.txt
  local got=$?
  if [ "$got" != "$code" ] || { [ -n "$needle" ] && ! grep -qF -- "$needle" err.txt; }; then
    echo "FAIL: $(echo "$*" | cut -c1-200) -> exit $got (want $code), stderr: $(head -c 300 err.txt)" >&2
    failures=$((failures + 1))
  fi
}
unchanged() {  # unchanged FILE SHA256
  if [ "$(sha256sum < "$1" | cut -d' ' -f1)" != "$2" ]; then
    echo "FAIL: $1 was changed" >&2
    failures=$((failures + 1))
  fi
}
sha() { sha256sum < "$1" | cut -d' ' -f1; }

# 1. JSON nested 100k deep, in a config file and in --set.
"$python" -c "d=100000; open('deep.json','w').write('{\"train\":' + '['*d + ']'*d + '}')"
expect 2 "nested deeper" -- "$fp8lab" train --config deep.json --out r0
expect 2 "is not a valid number value" -- "$fp8lab" train "${tiny[@]}" --set "optim.lr=$("$python" -c "print('['*30000+']'*30000)")" --out r0

# 2. Validation: negative steps, eps <= 0, and --set order does not matter.
expect 2 "train.steps -1" -- "$fp8lab" train "${tiny[@]}" --steps -1 --out r0
expect 2 "optim.eps" -- "$fp8lab" train "${tiny[@]}" --set optim.eps=0 --out r0
expect 0 "" -- "$fp8lab" train "${tiny[@]}" --steps 2 --set optim.lr=1e-5 --set optim.min_lr=1e-4 \
  --set optim.lr=1e-3 --out r1

# 3. Resume may change train.steps, nothing that alters the run.
expect 2 "optim.lr (checkpoint 0.001, now 0.5)" -- "$fp8lab" train "${tiny[@]}" --out r1 --resume \
  --steps 3 --set optim.lr=0.5
expect 0 "" -- "$fp8lab" train "${tiny[@]}" --out r1 --resume --steps 3 --set train.log_every=2

# 4. Two trainers on one run directory: the second is refused naming the first.
"$fp8lab" train "${tiny[@]}" --steps 1000000 --out r2 > /dev/null 2>&1 &
holder=$!
for _ in $(seq 100); do grep -q '"pid"' r2/.fp8lab-lock 2>/dev/null && break; sleep 0.05; done
expect 5 "in use by another fp8lab process (pid $holder" -- "$fp8lab" train "${tiny[@]}" --out r2 --resume
kill -9 "$holder"; wait "$holder" 2>/dev/null

# 5. Output directories fp8lab did not create, and outputs over inputs.
mkdir -p mine && echo "my notes" > mine/config.json && notes=$(sha mine/config.json)
expect 2 "--force" -- "$fp8lab" train "${tiny[@]}" --steps 1 --out mine
unchanged mine/config.json "$notes"
mkdir -p docs/sub && echo "hello world" > docs/a.txt && echo "int x;" > docs/sub/b.c
doc=$(sha docs/a.txt)
expect 2 "input" -- "$fp8lab" data pack --input docs/a.txt --out docs/a.txt
unchanged docs/a.txt "$doc"
expect 2 "input" -- "$fp8lab" data prepare --tokenizer byte --input docs --out docs --quiet
expect 2 "--force" -- "$fp8lab" data prepare --tokenizer byte --input docs --out mine --quiet
unchanged mine/config.json "$notes"
"$python" -c "import numpy as np; np.save('x.npy', np.arange(12, dtype=np.float32).reshape(3, 4))"
npy=$(sha x.npy)
expect 2 "would overwrite" -- "$fp8lab" quantize --in x.npy --out x.npy
expect 2 "would overwrite" -- "$fp8lab" quantize --in x.npy --out-transposed ./x.npy
unchanged x.npy "$npy"
expect 2 "not a regular file" -- "$fp8lab" quantize --in /dev/zero
expect 3 "cannot open" -- "$fp8lab" quantize --in missing.npy

# 6. Unpack follows no symbolic link out of its directory.
expect 0 "" -- "$fp8lab" data pack --input docs --out docs.fp8pack --threads 1
expect 0 "" -- "$fp8lab" data unpack --in docs.fp8pack --out un
mkdir -p outside && echo "keep" > outside/b.c && keep=$(sha outside/b.c)
rm -r un/sub && ln -s "$PWD/outside" un/sub
expect 2 "symbolic link" -- "$fp8lab" data unpack --in docs.fp8pack --out un
unchanged outside/b.c "$keep"

# 7. A flipped bit in a pack, and a version 1 pack.
"$python" -c "
b = bytearray(open('docs.fp8pack','rb').read()); b[len(b)//2] ^= 4; open('flip.fp8pack','wb').write(b)"
expect 2 "is corrupt" -- "$fp8lab" data unpack --in flip.fp8pack --out un2
expect 2 "format version 1" -- "$fp8lab" data prepare --tokenizer byte \
  --input "$(dirname "$0")/../../fuzz/regressions/pack/version1.fp8pack" --out p1 --quiet

# 8. eval: a meta.json that names a model larger than its weights is refused before allocation,
# and one beyond any model's limits (2^40 layers) when it is validated.
meta=r1/checkpoints/"$(tr -d '\n' < r1/checkpoints/latest)"/meta.json
cp "$meta" meta.saved
for layers in 4096 1099511627776; do
  "$python" - "$meta" "$layers" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["config"]["model"]["n_layers"] = int(sys.argv[2])
json.dump(m, open(sys.argv[1], "w"))
PY
  [ "$layers" = 4096 ] && want="larger than its" || want="n_layers 1099511627776, seq_len 16 exceed the limits"
  expect 2 "$want" -- "$fp8lab" eval --checkpoint r1 --policy bf16 --data docs
done
cp meta.saved "$meta"

# 9. tokenize streams: its JSON is valid, totals last.
head -c 200000 /dev/urandom | base64 > big.txt
expect 0 "" -- "$fp8lab" tokenize --tokenizer byte --in big.txt --json
"$python" -c "
import json; j = json.load(open('out.txt')); assert j['count'] == len(j['ids']) == j['bytes'] == $(wc -c < big.txt)" ||
  { echo "FAIL: tokenize --json" >&2; failures=$((failures + 1)); }

# 10. Usage errors.
expect 2 "budget" -- "$fp8lab" data pack --input docs --out z.fp8pack --budget-mb lots
expect 2 "" -- "$fp8lab" train --no-such-option

[ "$failures" = 0 ] || { echo "$failures failures" >&2; exit 1; }
echo "hostile inputs: all refused with their exit codes, no user file changed"
