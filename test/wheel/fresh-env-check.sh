#!/usr/bin/env bash
# README's pip route on a machine with torch, in a fresh venv, from the
# repository root:
#
#   OUT=DIR bash test/wheel/fresh-env-check.sh
#
# $PYTHON (default python3) is the interpreter that has torch. A venv is
# made from it with --system-site-packages; when that venv cannot import
# torch (the interpreter is itself a venv, whose packages
# --system-site-packages does not reach) its site-packages are added with a
# .pth file, as the README's "environment that has torch" has them. Nothing
# is fetched when scikit-build-core is already there. Then, as README says:
#   pip install --no-build-isolation .   (with -v, to see the configure lines)
# Checks:
#   1. the build prints one line each for cuDNN, cuBLAS and NCCL, each
#      naming the headers of the library that this torch loads (the
#      libcudnn, libcublas and libnccl that `import torch` maps, read from
#      /proc/self/maps: the include/ beside their lib/);
#   2. python -m xstream_check --version names torch's release;
#   3. with a CUDA GPU, a convolution, a linear layer and a matmul under
#      python -m xstream_check run: exit 0, no report, and no line saying
#      the runtime's headers are older than the library loaded.
# Writes $OUT/summary.txt (the chosen libraries, one line per check, PASS or
# FAIL last) and each step's log to $OUT (default build-gpu/fresh-env).
# Exit status 0 when every check held, 1 when one failed, 2 when there is no
# torch to build against.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
python=${PYTHON:-python3}
out=${OUT:-$root/build-gpu/fresh-env}
mkdir -p "$out"
summary=$out/summary.txt
: > "$summary"
work=$(mktemp -d "${TMPDIR:-/tmp}/xsc-fresh-env.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
note() { echo "$*" | tee -a "$summary"; }
check() {  # $1: what, $2: 0 when it held, $3: why not
  if [ "$2" -eq 0 ]; then note "ok: $1"; else note "FAIL: $1: $3"; failures=$((failures + 1)); fi
}

if ! torch_site=$("$python" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2> "$out/torch.log"); then
  echo "fresh-env-check: $python cannot import torch (torch.log); set PYTHON to the interpreter that has it" >&2
  exit 2
fi

# --- the fresh venv -------------------------------------------------------------
venv=$work/venv
"$python" -m venv --system-site-packages "$venv" > "$out/venv.log" 2>&1
vpy=$venv/bin/python
if ! "$vpy" -c 'import torch' 2> /dev/null; then
  vsite=$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$torch_site" > "$vsite/torch-environment.pth"
  note "note: $python is itself a venv: its site-packages ($torch_site) added to the fresh venv"
fi
"$vpy" -c 'import scikit_build_core' 2> /dev/null \
  || "$vpy" -m pip install -q scikit-build-core >> "$out/venv.log" 2>&1 \
  || { note "FAIL: no scikit-build-core, and pip cannot install it (venv.log)"; exit 1; }

# What this torch loads: the libraries `import torch` maps.
"$vpy" - > "$out/loaded.txt" 2>> "$out/torch.log" <<'PY'
import os
import torch  # noqa: F401  (maps libtorch_cuda and the libraries it needs)
seen = {}
for line in open("/proc/self/maps"):
    path = line.split()[-1] if len(line.split()) >= 6 else ""
    name = os.path.basename(path)
    for lib, prefix in (("cudnn", "libcudnn.so"), ("cublas", "libcublas.so"), ("nccl", "libnccl.so")):
        if name.startswith(prefix) and lib not in seen:
            seen[lib] = os.path.realpath(path)
for lib in ("cudnn", "cublas", "nccl"):
    print(lib, seen.get(lib, "-"))
print("torch", torch.__version__, torch.version.cuda, torch.backends.cudnn.version())
PY
{
  echo "== python";  "$vpy" --version 2>&1
  echo "== torch";   tail -1 "$out/loaded.txt"
  echo "== loaded";  head -3 "$out/loaded.txt"
  echo "== system cuDNN headers"; find /usr/include /usr/local/cuda/include -maxdepth 2 -name cudnn_version.h 2>/dev/null
  echo "== git";     git -C "$root" log -1 --oneline 2>/dev/null || true
} > "$out/env.log" 2>&1
note "torch: $(tail -1 "$out/loaded.txt")"

# --- the README's pip route ---------------------------------------------------------
# A machine without the Debian build dependencies (the GPU test machine)
# takes them from .gpu-tools/ (test/gpu/prepare-tools.sh) when it is there.
extra=()
if [ -f "$root/.gpu-tools/MANIFEST" ]; then
  extra=(-C "cmake.define.CMAKE_PREFIX_PATH=$root/.gpu-tools")
  export LD_LIBRARY_PATH=$root/.gpu-tools/lib:$root/.gpu-tools/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PKG_CONFIG_PATH=$root/.gpu-tools/lib/x86_64-linux-gnu/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  note "note: build dependencies from .gpu-tools/"
fi
[ -d /usr/local/cuda/bin ] && export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
(cd "$root" && "$vpy" -m pip install -v --no-build-isolation "${extra[@]}" . ) > "$out/install.log" 2>&1
rc=$?
check "pip install --no-build-isolation . ($(( $(date +%s) - start )) s)" $rc "exit $rc (install.log)"
[ $rc -eq 0 ] || { tail -30 "$out/install.log"; note "FAIL"; exit 1; }

# --- 1. the headers chosen are those of the libraries torch loads ------------------------
for lib in cuDNN cuBLAS NCCL; do
  key=$(echo "$lib" | tr '[:upper:]' '[:lower:]')
  line=$(grep -m1 -o "xstream-check: $lib .*" "$out/install.log")
  note "chosen: ${line:-none for $lib}"
  loaded=$(awk -v k="$key" '$1 == k { print $2 }' "$out/loaded.txt")
  if [ -z "$loaded" ] || [ "$loaded" = - ]; then
    note "note: torch maps no $lib library at import; nothing to compare"
    continue
  fi
  incdir=$(sed -n "s|^xstream-check: $lib [^ ]* headers: \(.*\) (.*$|\1|p" <<< "$line")
  want=$(readlink -f "$(dirname "$(dirname "$loaded")")/include" 2>/dev/null)
  got=$(readlink -f "$incdir" 2>/dev/null)
  check "$lib headers beside the library torch loads ($loaded)" \
    "$([ -n "$got" ] && [ "$got" = "$want" ]; echo $?)" "built with '${incdir:-none}', expected $want"
done

# --- 2. the installed package ----------------------------------------------------------
version=$(cd "$work" && "$vpy" -m xstream_check --version 2>&1 | head -3 | tr '\n' ' ')
note "version: $version"
torch_version=$(awk '$1 == "torch" { print $2 }' "$out/loaded.txt")
grep -qF "torch $torch_version" <<< "$version"
check "--version names the adapter's torch ($torch_version)" $? "$version"

# --- 3. the libraries under the runtime, on a GPU ---------------------------------------
if "$vpy" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2> /dev/null; then
  cat > "$work/libraries.py" <<'PY'
import torch
x = torch.randn(8, 3, 32, 32, device="cuda")
conv = torch.nn.Conv2d(3, 16, 3).cuda()
lin = torch.nn.Linear(64, 64).cuda()
y = conv(x).sum()
z = lin(torch.randn(16, 64, device="cuda")) @ torch.randn(64, 8, device="cuda")
torch.cuda.synchronize()
print("done", float(y), float(z.sum()))
PY
  (cd "$work" && "$vpy" -m xstream_check run -- libraries.py) > "$out/run.log" 2>&1
  rc=$?
  check "run: conv2d, linear, matmul exit 0" $rc "exit $rc (run.log)"
  ! grep -q "WARNING: xstream-check" "$out/run.log"
  check "run: no report" $? "a WARNING in run.log"
  ! grep -q "xstream-check: built with .* headers but" "$out/run.log"
  check "run: the runtime's headers are not older than the libraries loaded" $? \
    "$(grep -m1 'xstream-check: built with' "$out/run.log")"
else
  note "unsupported: no CUDA GPU; the run under the libraries was skipped"
fi

if [ $failures -eq 0 ]; then note "PASS"; else note "FAIL ($failures check(s))"; fi
[ $failures -eq 0 ]
