#!/usr/bin/env bash
# The runtime's library interposers (runtime/libs/: cudnn/cudnn.cpp,
# cudnn/cudnn_backend.cpp, cublas/cublas.cpp, cublas/cublaslt.cpp,
# cublas/blas_uses.cpp, nccl/nccl_interpose.cpp)
# compiled against the oldest cuDNN, cuBLAS and NCCL headers supported and
# against the newest ones, taken from the libraries' PyPI wheels:
#
#   bash test/headers/check-headers.sh [SET...]      (default: oldest newest)
#
# Each set is configured as a tree of its own (XSC_CUDNN_ROOT,
# XSC_CUBLAS_ROOT and XSC_NCCL_ROOT naming the headers) and only those
# objects are built. Checks, for each set: the configure step names each
# library's headers with the expected version; every interposer compiles;
# each object was compiled from that set's headers (ninja's dependency
# records) and defines its interposers (nm).
#
# Only the wheels' include/ directories are kept, in
# $XSC_HEADERS_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/xstream-check/headers):
# a rerun downloads nothing. Needs the CUDA toolkit (with CUPTI), cmake,
# ninja, a C++ compiler, and pip with PyPI access for a first run.
# Build trees go to $XSC_HEADERS_BUILD (default build/headers).
# Exit status 0 when every check held, 1 when one failed, 2 on bad usage.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${XSC_HEADERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/xstream-check/headers}
build=${XSC_HEADERS_BUILD:-$root/build/headers}
python=${PYTHON:-python3}

# name | pip requirement | directory under site-packages/nvidia | version the
# headers must say. Newest: the latest releases on PyPI when this was
# written; bump them when new ones come out.
declare -A sets=(
  [oldest]="cudnn|nvidia-cudnn-cu12==9.0.0.312|cudnn|9.0.0 cublas|nvidia-cublas-cu12==12.0.1.189|cublas|12.0.1 nccl|nvidia-nccl-cu12==2.18.1|nccl|2.18.1"
  [newest]="cudnn|nvidia-cudnn-cu13==9.28.1.4|cudnn|9.28.1 cublas|nvidia-cublas==13.10.0.20|cu13|13.10.0 nccl|nvidia-nccl-cu13==2.32.6|nccl|2.32.6"
)
# What each interposer object must define, and the header it must have read.
objects=(
  "libs/cudnn/cudnn.cpp|cudnnConvolutionForward|cudnn|cudnn.h"
  "libs/cudnn/cudnn_backend.cpp|cudnnBackendExecute|cudnn|cudnn_graph.h"
  "libs/cublas/cublas.cpp|cublasGemmEx|cublas|cublas_api.h"
  "libs/cublas/cublaslt.cpp|cublasLtMatmul|cublas|cublasLt.h"
  "libs/cublas/blas_uses.cpp|blas|cublas|cublas_api.h"
  "libs/nccl/nccl_interpose.cpp|ncclAllReduce|nccl|nccl.h"
)

wanted=("$@")
[ ${#wanted[@]} -eq 0 ] && wanted=(oldest newest)
for s in "${wanted[@]}"; do
  if [ -z "${sets[$s]:-}" ]; then
    echo "check-headers: unknown set '$s' (known: ${!sets[*]})" >&2
    exit 2
  fi
done

cuda=${CUDAToolkit_ROOT:-/usr/local/cuda}
if [ ! -e "$cuda/include/cupti.h" ] && [ ! -e "$cuda/extras/CUPTI/include/cupti.h" ]; then
  echo "check-headers: UNSUPPORTED: no CUDA toolkit with CUPTI headers at $cuda"
  exit 0
fi

failures=0
fail() { echo "check-headers: FAIL: $*"; failures=$((failures + 1)); }

# Prints the directory holding nvidia/<dir>/include for one pip requirement,
# downloading the wheel and extracting its headers on a first call.
fetch() {  # $1: requirement, $2: directory under nvidia/
  local req=$1 sub=$2 dest=$cache/${1//[=<>]/-}
  if [ -f "$dest/.complete" ] && [ -d "$dest/nvidia/$sub/include" ]; then
    echo "$dest"
    return 0
  fi
  local tmp
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/xsc-headers.XXXXXX") || return 1
  echo "check-headers: downloading $req (headers only are kept, in $dest)" >&2
  if ! "$python" -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "$req" >&2; then
    rm -rf "$tmp"
    echo "check-headers: pip download $req failed" >&2
    return 1
  fi
  rm -rf "$dest"
  mkdir -p "$dest"
  if ! "$python" - "$tmp" "$dest" "$sub" <<'PY' >&2; then
import glob, sys, zipfile
tmp, dest, sub = sys.argv[1:]
wheels = glob.glob(tmp + "/*.whl")
if len(wheels) != 1:
    sys.exit("expected one wheel in %s, found %d" % (tmp, len(wheels)))
prefix = "nvidia/%s/include/" % sub
with zipfile.ZipFile(wheels[0]) as z:
    names = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
    if not names:
        sys.exit("%s has no %s" % (wheels[0], prefix))
    z.extractall(dest, names)
PY
    rm -rf "$tmp" "$dest"
    return 1
  fi
  rm -rf "$tmp"
  touch "$dest/.complete"
  echo "$dest"
}

for set in "${wanted[@]}"; do
  defines=()
  declare -A expect_dir=() expect_version=()
  for entry in ${sets[$set]}; do
    IFS='|' read -r lib req sub version <<< "$entry"
    if ! dir=$(fetch "$req" "$sub"); then
      fail "$set: cannot get the headers of $req"
      continue 2
    fi
    lib_upper=${lib^^}
    defines+=("-DXSC_${lib_upper}_ROOT=$dir/nvidia/$sub")
    expect_dir[$lib]=$dir/nvidia/$sub/include
    expect_version[$lib]=$version
  done

  tree=$build/$set
  log=$tree.configure.log
  mkdir -p "$build"
  # A fresh configuration: nothing cached from another set.
  rm -rf "$tree"
  if ! cmake -S "$root" -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DXSC_BUILD_TORCH=OFF -DXSC_BUILD_CLANG_PLUGIN=OFF -DXSC_BUILD_EXAMPLES=OFF \
      -DXSC_BUILD_BENCH=OFF -DXSC_BUILD_TESTS=OFF -DXSC_LIBRARIES_FROM_TORCH=OFF \
      "${defines[@]}" > "$log" 2>&1; then
    tail -20 "$log"
    fail "$set: configure (see $log)"
    continue
  fi
  for lib in cudnn cublas nccl; do
    case $lib in cudnn) name=cuDNN ;; cublas) name=cuBLAS ;; nccl) name=NCCL ;; esac
    line=$(grep -m1 "xstream-check: $name " "$log")
    if [[ "$line" != *"xstream-check: $name ${expect_version[$lib]} headers: ${expect_dir[$lib]} "* ]]; then
      fail "$set: configure names for $name '${line:-nothing}', expected version ${expect_version[$lib]} at ${expect_dir[$lib]}"
    else
      echo "check-headers: $set: ${line#*-- }"
    fi
  done

  targets=()
  for o in "${objects[@]}"; do
    IFS='|' read -r src _ _ _ <<< "$o"
    targets+=("runtime/CMakeFiles/xstream_check.dir/$src.o")
  done
  if ! ninja -C "$tree" -k 0 "${targets[@]}" > "$tree.build.log" 2>&1; then
    grep -E 'error' "$tree.build.log" | head -20
    fail "$set: the interposers do not compile against these headers (see $tree.build.log)"
    continue
  fi
  for o in "${objects[@]}"; do
    IFS='|' read -r src symbol lib header <<< "$o"
    obj=runtime/CMakeFiles/xstream_check.dir/$src.o
    # (nm's whole output first: grep -q stopping early fails the pipe.)
    symbols=$(nm -C "$tree/$obj" 2>/dev/null)
    if ! grep -q " T .*$symbol" <<< "$symbols"; then
      fail "$set: $src compiled to an object without $symbol"
    fi
    # The compiler read the copy of this set's $header that the configure
    # step made (cmake/XscLibraryHeaders.cmake), and no other $header.
    read_from=$(ninja -C "$tree" -t deps "$obj" | sed -n "s|^ *\(.*/$header\)$|\1|p" | sort -u)
    copy=$tree/library-headers/$lib/$header
    if [ "$read_from" != "$copy" ]; then
      fail "$set: $src read $header from '${read_from:-nowhere}', expected $copy"
    elif ! cmp -s "$copy" "${expect_dir[$lib]}/$header"; then
      fail "$set: $copy is not ${expect_dir[$lib]}/$header"
    fi
  done
  [ $failures -eq 0 ] && echo "check-headers: $set: ${#objects[@]} interposers compiled against these headers"
done

if [ $failures -eq 0 ]; then echo "check-headers: PASS"; else echo "check-headers: FAIL ($failures)"; fi
[ $failures -eq 0 ]
