#!/usr/bin/env bash
# Session 16, call 5 (main at df21f47): the issue-6 targets on the final code, each preset with
# the PyTorch bf16 peer in the same call and our arms in two interleaved rounds.
set -u
cd "$(dirname "$0")/.."
base=$OUT
OUT=$base/g13 PRESETS=gpt1.3b ARMS="bf16 fp8-linears" PEER_ARMS=bf16 BENCH_ROUNDS=2 \
  REPEATS=10 BENCH_ARGS=--no-frozen PEER_TIMEOUT=160 BENCH_TIMEOUT=200 \
  scripts/gpu-session bench-model 2>&1 | grep -E 'train step|^\| (bf16|fp8)|target|exit|busy'
tar -czf "$base/g13.tar.gz" -C "$base" g13 && rm -rf "$base/g13"
OUT=$base/g50 PRESETS=gpt50m ARMS="bf16 fp8-mlp bf16+recompute" PEER_ARMS=bf16 BENCH_ROUNDS=2 \
  REPEATS=10 PEER_TIMEOUT=140 BENCH_TIMEOUT=200 \
  scripts/gpu-session bench-model 2>&1 | grep -E 'train step|^\| (bf16|fp8)|target|exit|busy'
tar -czf "$base/g50.tar.gz" -C "$base" g50 && rm -rf "$base/g50"
