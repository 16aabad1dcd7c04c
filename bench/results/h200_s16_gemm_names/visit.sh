#!/usr/bin/env bash
# Session 16, call 4: the names (and ncu durations, clocks locked) of fp8lab's GEMM kernels in
# one bf16 fwd+bwd at gpt1.3b and gpt50m, to set beside the PyTorch peer's profiled nvjet kernels
# (call 2): is the peer's 4.5-11% GEMM lead the kernels cuBLASLt picks for fp8lab's calls?
set -u
cd "$(dirname "$0")/.."
d=$OUT/gemm_names; mkdir -p "$d"
mkdir -p .gpubin
python3 -c 'import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
  .gpucarry/bin.tar.xz .gpubin
export LD_LIBRARY_PATH="$PWD/.gpubin/lib:/usr/local/cuda/lib64"
for p in gpt1.3b gpt50m; do
  [ $p = gpt1.3b ] && n=300 || n=200
  timeout 200 /usr/local/cuda/bin/ncu --metrics gpu__time_duration.sum \
    -k 'regex:nvjet|gemm|xmma|cutlass' -c $n --csv .gpubin/fp8lab bench model --preset $p \
    --arms bf16 --repeats 1 --warmup 0 --no-step > "$d/ncu_$p.csv" 2> "$d/ncu_$p.err"
  echo "ncu $p exit $?" >> "$d/ncu_$p.err"
  python3 - "$d/ncu_$p.csv" <<'PY' | tee "$d/summary_$p.txt"
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; ki = head.index("Kernel Name"); vi = head.index("Metric Value")
bi = head.index("Block Size") if "Block Size" in head else None
gi = head.index("Grid Size") if "Grid Size" in head else None
agg = collections.defaultdict(lambda: [0, 0.0])
for r in rows[1:]:
    key = r[ki][:100] + (f"  grid {r[gi]}" if gi is not None else "")
    agg[key][0] += 1; agg[key][1] += float(r[vi].replace(",", "")) / 1e6
print(f"{len(rows) - 1} kernels, {sum(v[1] for v in agg.values()):.2f} ms (ncu, clocks locked)")
for k, (n, ms) in sorted(agg.items(), key=lambda kv: -kv[1][1]):
    print(f"{ms:9.3f} ms {n:4d}  {k}")
PY
done
tar -czf "$OUT/gemm_names.tar.gz" -C "$OUT" gemm_names && rm -rf "$d"
