#!/usr/bin/env bash
# Session 16, call 1: v39 (b, branch v39-ce-ring) against main (a): the whole GPU suite on b,
# gpt50m bf16 op times and two alternating rounds of the step, then ncu on the ring kernel.
set -u
cd "$(dirname "$0")/.."
base=$OUT
OUT=$base/ab AB_FILTER='*' PRESETS=gpt50m ARMS=bf16 AB_ROUNDS=2 REPEATS=10 \
  scripts/gpu-session ab
OUT=$base/ncu NCU_SURVEY='ring=cross_entropy_ring' NCU_SKIP=0 scripts/gpu-session ncu-survey
