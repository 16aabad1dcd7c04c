#!/usr/bin/env bash
# Session 16, call 9: the whole GPU suite on main at its final CUDA code (v40).
set -u
cd "$(dirname "$0")/.."
base=$OUT
OUT=$base/t scripts/gpu-session tests
# (the suite step tars its own log; this line gzipped a path that was not there)
