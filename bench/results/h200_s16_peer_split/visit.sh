#!/usr/bin/env bash
# Session 16, call 2 (main at df21f47): the whole GPU suite, then per preset the bf16 arm's op
# times with the PyTorch bf16 peer in the same call, the peer's profiled step split into GEMM,
# attention and other (gpt_peer.py --profile). Each part tarred as it ends.
set -u
cd "$(dirname "$0")/.."
base=$OUT
OUT=$base/t scripts/gpu-session tests
tar -czf "$base/tests.tar.gz" -C "$base" t && rm -rf "$base/t"
for p in gpt1.3b gpt350m gpt50m; do
  OUT=$base/$p PRESETS=$p ARMS=bf16 PEER_ARMS=bf16 PEER_ARGS=--profile OP_TIMES=1 \
    BENCH_ARGS=--no-frozen REPEATS=10 PEER_TIMEOUT=170 BENCH_TIMEOUT=100 \
    scripts/gpu-session bench-model 2>&1 | grep -E 'profiled|train step|^\| bf16|exit'
  tar -czf "$base/bench_$p.tar.gz" -C "$base" "$p" && rm -rf "${base:?}/$p"
done
