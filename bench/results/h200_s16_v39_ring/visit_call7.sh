#!/usr/bin/env bash
# Session 16, call 7: the whole GPU suite on branch v39-ce-ring at f3280e7 (the ring test's
# host-side comparison fixed after call 1's segfault).
set -u
cd "$(dirname "$0")/.."
d=$OUT/v39; mkdir -p "$d" .gpubin_v39
python3 -c 'import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
  .gpucarry/bin_v39.tar.xz .gpubin_v39
export LD_LIBRARY_PATH="$PWD/.gpubin_v39/lib:/usr/local/cuda/lib64"
timeout 200 .gpubin_v39/test_cuda > "$d/test_cuda_v39.log" 2>&1
echo "test_cuda exit $?" >> "$d/test_cuda_v39.log"
grep -E '^\[  (PASSED|FAILED) |^\[  FAILED|exit|Ring' "$d/test_cuda_v39.log" | tail -20
gzip -9 "$d/test_cuda_v39.log"
