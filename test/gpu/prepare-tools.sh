#!/usr/bin/env bash
# Fills .gpu-tools/ (git-ignored) with what the GPU test machine lacks, taken
# from this machine's Debian packages, so that test/gpu/run.sh can build and
# run the GPU lit suites there without network access:
#   bin/       lit (wrapper around lit/), FileCheck, not, count, split-file
#   lit/       the lit Python package (llvm-22)
#   lib/       libz3.so.4 (needed by the LLVM tools)
#   lib/x86_64-linux-gnu/, include/, share/cmake/
#              build dependencies laid out like /usr so their CMake package
#              files work from here: elfutils libdw/libelf, simdjson,
#              nlohmann-json, GoogleTest/GoogleMock, libunwind, LLVM's
#              Itanium demangler (headers and libLLVMDemangle.a, for the
#              kernel parameter access of runtime/cuda/param_access)
# Every shared library is copied as a regular file under each of its names
# (symbolic links may not survive the transfer). Run from anywhere; needs the
# packages listed in test/install-deps.sh.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
dest=$root/.gpu-tools
llvm=/usr/lib/llvm-22
multiarch=x86_64-linux-gnu
syslib=/usr/lib/$multiarch

die() { echo "prepare-tools: $*" >&2; exit 1; }
need() { [ -e "$1" ] || die "missing $1 (install it with test/install-deps.sh)"; }

for f in "$llvm/utils/lit/lit" "$llvm/bin/FileCheck" "$llvm/bin/not" "$llvm/bin/count" \
         "$llvm/bin/split-file" "$syslib/libz3.so.4" /usr/include/elfutils/libdwfl.h \
         "$syslib/libdw.so.1" "$syslib/libelf.so.1" /usr/include/simdjson.h \
         "$syslib/cmake/simdjson" /usr/include/nlohmann/json.hpp /usr/share/cmake/nlohmann_json \
         /usr/include/gtest/gtest.h "$syslib/cmake/GTest" "$syslib/libgtest.a" \
         "$llvm/include/llvm/Demangle/ItaniumDemangle.h" "$llvm/include/llvm/Config/llvm-config.h" \
         "$llvm/lib/libLLVMDemangle.a"; do
  need "$f"
done

rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib/$multiarch/cmake" "$dest/lib/$multiarch/pkgconfig" \
         "$dest/include" "$dest/share/cmake"

# --- lit and the LLVM test tools -------------------------------------------
cp -r "$llvm/utils/lit" "$dest/lit"
find "$dest/lit" -name __pycache__ -type d -prune -exec rm -rf {} +
cat > "$dest/bin/lit" <<'EOF'
#!/usr/bin/env python3
# lit from the carried copy next to this directory (../lit).
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), os.pardir, "lit"))
from lit.main import main

if __name__ == "__main__":
    main()
EOF
chmod +x "$dest/bin/lit"
for tool in FileCheck not count split-file; do
  cp -L "$llvm/bin/$tool" "$dest/bin/$tool"
done
cp -L "$syslib/libz3.so.4" "$dest/lib/libz3.so.4"

# --- build dependencies, /usr layout -----------------------------------------
# copy_lib NAME...: each file of $syslib matching NAME (a glob), dereferenced.
copy_lib() {
  local pattern f
  for pattern in "$@"; do
    for f in $syslib/$pattern; do
      [ -e "$f" ] || continue
      cp -L "$f" "$dest/lib/$multiarch/$(basename "$f")"
    done
  done
}
copy_lib 'libdw.so' 'libdw.so.1' 'libdw-*.so' 'libelf.so' 'libelf.so.1' 'libelf-*.so'
copy_lib 'libsimdjson.so' 'libsimdjson.so.*'
copy_lib 'libgtest.a' 'libgtest_main.a' 'libgmock.a' 'libgmock_main.a'
copy_lib 'libunwind.so' 'libunwind.so.8' 'libunwind-x86_64.so' 'libunwind-x86_64.so.8'

cp -r /usr/include/elfutils "$dest/include/"
cp /usr/include/dwarf.h /usr/include/gelf.h /usr/include/libelf.h /usr/include/nlist.h "$dest/include/"
cp /usr/include/simdjson.h "$dest/include/"
cp -r /usr/include/nlohmann "$dest/include/"
cp -r /usr/include/gtest /usr/include/gmock "$dest/include/"
# libunwind's own headers only: its unwind.h would shadow the compiler's.
for h in /usr/include/$multiarch/libunwind*.h; do
  [ -e "$h" ] && cp "$h" "$dest/include/"
done

mkdir -p "$dest/include/llvm/Config"
cp -r "$llvm/include/llvm/Demangle" "$dest/include/llvm/"
cp "$llvm/include/llvm/Config/llvm-config.h" "$dest/include/llvm/Config/"
cp "$llvm/lib/libLLVMDemangle.a" "$dest/lib/"

cp -r "$syslib/cmake/simdjson" "$syslib/cmake/GTest" "$dest/lib/$multiarch/cmake/"
cp -r /usr/share/cmake/nlohmann_json "$dest/share/cmake/"

# pkg-config files, relocated to wherever .gpu-tools lands. Private
# requirements are dropped: only shared linking is done from here, and their
# .pc files (zlib, liblzma) are not on the GPU machine.
for pc in libdw libelf simdjson libunwind; do
  src=$syslib/pkgconfig/$pc.pc
  [ -e "$src" ] || continue
  sed -e 's|^prefix=.*|prefix=${pcfiledir}/../../..|' \
      -e "s|^libdir=/usr/lib/$multiarch|libdir=\${prefix}/lib/$multiarch|" \
      -e '/^Requires.private:/d' -e '/^Libs.private:/d' \
      "$src" > "$dest/lib/$multiarch/pkgconfig/$pc.pc"
done

{
  echo "# Carried by test/gpu/prepare-tools.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  "$dest/bin/FileCheck" --version 2>/dev/null | grep -i version | head -1 || true
  for p in llvm-22-tools llvm-22-dev python3-lit libz3-4 libdw-dev libelf-dev libsimdjson-dev \
           nlohmann-json3-dev libgtest-dev libgmock-dev libunwind-dev; do
    dpkg-query -W -f='${Package} ${Version}\n' "$p" 2>/dev/null || true
  done
} > "$dest/MANIFEST"

# The carried tools must start from the carried libraries alone.
LD_LIBRARY_PATH=$dest/lib "$dest/bin/FileCheck" --version > /dev/null ||
  die "carried FileCheck does not run"
python3 "$dest/bin/lit" --version > /dev/null || die "carried lit does not run"
echo "prepare-tools: $(du -sh "$dest" | cut -f1) in $dest"
