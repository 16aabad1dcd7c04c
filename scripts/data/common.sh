# Shared by scripts/data/*: paths, Debian package download/extract, the fp8lab binary.
# Sourced, not run. Everything lands under data/cache/ (git-ignored).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache="$repo/data/cache"
mkdir -p "$cache/deb"

# fp8lab binary: $FP8LAB, else the first built one.
fp8lab_bin() {
  if [ -n "${FP8LAB:-}" ]; then echo "$FP8LAB"; return; fi
  for b in "$repo"/build/fp8lab "$repo"/build-*/fp8lab; do
    [ -x "$b" ] && { echo "$b"; return; }
  done
  echo "no fp8lab binary: run scripts/build or set FP8LAB" >&2
  exit 1
}

# deb_extract PACKAGE DEST: apt-get download (once) and dpkg-deb -x into DEST.
deb_extract() {
  local pkg=$1 dest=$2
  if ! ls "$cache"/deb/"${pkg}"_*.deb >/dev/null 2>&1; then
    (cd "$cache/deb" && apt-get download "$pkg")
  fi
  if [ ! -e "$dest/.extracted-$pkg" ]; then
    mkdir -p "$dest"
    dpkg-deb -x "$(ls "$cache"/deb/"${pkg}"_*.deb | head -1)" "$dest"
    touch "$dest/.extracted-$pkg"
  fi
}
