#!/usr/bin/env bash
# Session 16, call 8: v40 (b = 7f92f7d, AdamW in whole sectors) against a = df21f47: the AdamW
# and fused-amax tests on b, gpt1.3b fp8-linears op times for b then a, and ncu on the first
# AdamW launch (wte, 25.8 M floats) of one gpt50m bf16 step for each build.
set -u
cd "$(dirname "$0")/.."
base=$OUT
OUT=$base/ab AB_FILTER='CudaOps.Adamw*:*FusedAmax*:CudaModelOptimizer*:CudaModelZeroGrads*' \
  PRESETS=gpt1.3b ARMS=fp8-linears REPEATS=5 BENCH_TIMEOUT=110 scripts/gpu-session ab 2>&1 |
  grep -E 'PASSED|FAILED|exit|adamw|==|^\| fp8'
export LD_LIBRARY_PATH="$PWD/.gpubin/lib:/usr/local/cuda/lib64"
d=$base/ncu; mkdir -p "$d"
for v in b a; do
  LD_LIBRARY_PATH="$PWD/.gpubin_$v/lib:/usr/local/cuda/lib64" timeout 90 \
    /usr/local/cuda/bin/ncu -k regex:adamw -c 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis .gpubin_$v/fp8lab bench model --preset gpt50m --arms bf16 \
    --repeats 1 --warmup 0 --no-frozen > "$d/adamw_$v.txt" 2>&1
  echo "ncu exit $?" >> "$d/adamw_$v.txt"
  echo "== $v"; grep -E 'Duration|DRAM Throughput|L2 Cache Throughput|Memory Throughput|exit' "$d/adamw_$v.txt"
done
tar -czf "$base/ncu.tar.gz" -C "$base" ncu && rm -rf "$d"
