#!/usr/bin/env bash
# Session 16, call 6: cuBLASLt's configurations for the bf16 GEMMs of gpt1.3b (v33 searched the
# FP8 ones only): does any run the bf16 step's GEMMs faster than the heuristic's pick?
set -u
cd "$(dirname "$0")/.."
OUT=$OUT/survey PROBES=cublaslt_gemm_survey SURVEY_ARGS="--preset gpt1.3b --bf16" \
  SURVEY_TIMEOUT=430 scripts/gpu-session probe 2>&1 | grep -E '^(==|[a-z.]+ +(fwd|dX|dW)|gpt1|cuBLASLt|cublaslt)' | cut -c1-260
