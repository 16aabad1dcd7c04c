# Shared by the CLI tests (tests/*/*_cli_test.sh); sourced after `set -euo pipefail`.

fail() { echo "FAIL: $*" >&2; exit 1; }

# byte_word_corpus FP8LAB WORK DOCS WORDS: DOCS documents of WORDS words each in WORK/txt, drawn
# from a small vocabulary in a pattern per document (structure, so losses move in a few steps),
# prepared as byte-level shards in WORK/data with a quarter of the documents held out.
byte_word_corpus() {
  local fp8lab=$1 work=$2 docs=$3 count=$4
  local words=(the lord said unto moses and he went up into mount of god behold)
  mkdir -p "$work/txt"
  for d in $(seq 1 "$docs"); do
    local line=""
    for i in $(seq 1 "$count"); do line+="${words[$(( (i * d + i / 7) % ${#words[@]} ))]} "; done
    echo "$line" > "$work/txt/doc$d.txt"
  done
  "$fp8lab" data prepare --tokenizer byte --input "$work/txt" --split hash --heldout-fraction 0.25 \
    --out "$work/data" --quiet > /dev/null
}
