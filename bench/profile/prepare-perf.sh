#!/usr/bin/env bash
# Copies this machine's perf (linux-perf) with every library it links, and
# the dynamic loader, into build-perf-tools/ (ignored by git, as build*/),
# so that perf runs on a GPU machine that has none: carry build-perf-tools
# to it and run bench/profile/profile.sh there. The loader is carried too
# because the libraries may need a newer C library than that machine's.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dest=$root/build-perf-tools
perf=$(command -v perf) || { echo "prepare-perf: no perf here (apt-get install linux-perf)" >&2; exit 2; }
rm -rf "$dest"
mkdir -p "$dest/lib"
cp -L "$perf" "$dest/perf"
ldd "$perf" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do cp -L "$lib" "$dest/lib/"; done
cp -L /lib64/ld-linux-x86-64.so.2 "$dest/ld-linux-x86-64.so.2"
"$dest/ld-linux-x86-64.so.2" --library-path "$dest/lib" "$dest/perf" --version
du -sh "$dest"
