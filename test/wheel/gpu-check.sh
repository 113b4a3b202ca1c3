#!/usr/bin/env bash
# The pip route and pytest --xstream-check on a GPU machine, in one command,
# from the repository root:
#
#   OUT=DIR bash test/wheel/gpu-check.sh WHEEL
#
# WHEEL is a wheel built with the PyTorch adapter against the machine's
# torch (pip wheel . --no-build-isolation --no-deps -w .whl
# -C cmake.define.XSC_TORCH_ROOT=.../site-packages/torch). python3 (or
# $PYTHON) is the environment that has torch and pytest; nothing is fetched
# from the network. Checks:
#   1. the wheel installs with pip install --no-deps --target;
#   2. python -m xstream_check run on examples/torch/pipelines.py: buggy
#      exits 66 with one unordered free at the loop's del, keep_ref exits 0
#      with no report;
#   3. pytest --xstream-check on test/wheel/gpu/test_pipeline_pytest.py:
#      exactly test_freed_before_the_default_stream_waits fails, with the
#      report (its test and its del line) in the failure text, and
#      test_waits_before_del passes; again with -n 2 when pytest-xdist is
#      installed.
# Writes $OUT/summary.txt (one line per check, PASS or FAIL last) and each
# step's log to $OUT (default build-gpu/check). Exit status 0 when every check
# passed, 1 when one failed, 2 on bad usage.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
wheel=${1:-}
if [ -z "$wheel" ] || [ ! -f "$wheel" ]; then
  echo "usage: OUT=DIR bash test/wheel/gpu-check.sh WHEEL (no wheel at '${wheel}')" >&2
  exit 2
fi
wheel=$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")
python=${PYTHON:-python3}
out=${OUT:-$root/build-gpu/check}
mkdir -p "$out"
summary=$out/summary.txt
: > "$summary"
work=$(mktemp -d "${TMPDIR:-/tmp}/xsc-gpu-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
note() { echo "$*" | tee -a "$summary"; }
check() {  # $1: what, $2: 0 when it held, $3: why not
  if [ "$2" -eq 0 ]; then note "ok: $1"; else note "FAIL: $1: $3"; failures=$((failures + 1)); fi
}

{
  echo "== nvidia-smi"; nvidia-smi -L 2>&1 || true
  echo "== python";     "$python" --version 2>&1
  echo "== torch";      "$python" -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())' 2>&1
  echo "== pytest";     "$python" -m pytest --version 2>&1
  echo "== xdist";      "$python" -c 'import xdist; print(xdist.__version__)' 2>&1
  echo "== wheel";      ls -l "$wheel"
  echo "== git";        git -C "$root" log -1 --oneline 2>/dev/null || true
} > "$out/env.log" 2>&1
note "gpu: $(nvidia-smi -L 2>/dev/null | head -1 || echo none); wheel: $(basename "$wheel")"

# --- 1. install -----------------------------------------------------------------
"$python" -m pip install --no-deps --no-index --target "$work/site" "$wheel" > "$out/install.log" 2>&1
rc=$?
check "pip install --no-deps --target" $rc "exit $rc (install.log)"
[ $rc -eq 0 ] || { note "FAIL"; exit 1; }
export PYTHONPATH=$work/site${PYTHONPATH:+:$PYTHONPATH}
unset XSC_OPTIONS LD_PRELOAD XSC_RUNTIME_LIBRARY XSC_PROGRAM XSC_PYTEST_DIR
version=$(cd "$work" && "$python" -m xstream_check --version 2>&1 | head -1)
note "version: $version"
case "$version" in
  *"PyTorch adapter built against"*) ;;
  *) note "note: this wheel has no PyTorch adapter: caching-allocator frees are not checked" ;;
esac

# --- 2. python -m xstream_check run on the seed's pipelines -----------------------
pipelines=$root/examples/torch/pipelines.py
free_line=$(grep -n 'xsc: free buggy' "$pipelines" | head -1 | cut -d: -f1)
(cd "$work" && "$python" -m xstream_check run -- "$pipelines" buggy --trials 2) > "$out/run-buggy.log" 2>&1
rc=$?
check "run pipelines.py buggy exits 66" $((rc != 66)) "exit $rc (run-buggy.log)"
grep -q "SUMMARY: xstream-check: unordered-free .*pipelines.py:$free_line in run_buggy" "$out/run-buggy.log"
check "run pipelines.py buggy reports the free at pipelines.py:$free_line" $? "no such SUMMARY line"
grep -q "^xstream-check: 1 finding(s) (0 suppressed)" "$out/run-buggy.log"
check "run pipelines.py buggy: exactly one finding" $? "$(grep '^xstream-check: [0-9]* finding' "$out/run-buggy.log" || echo 'no closing line')"
(cd "$work" && "$python" -m xstream_check run -- "$pipelines" keep_ref --trials 2) > "$out/run-keep_ref.log" 2>&1
rc=$?
check "run pipelines.py keep_ref exits 0" $rc "exit $rc (run-keep_ref.log)"
! grep -q "WARNING: xstream-check" "$out/run-keep_ref.log"
check "run pipelines.py keep_ref: no report" $? "a WARNING in run-keep_ref.log"

# --- 3. pytest --xstream-check ------------------------------------------------------
mkdir -p "$work/pytest"
cp "$root/test/wheel/gpu/test_pipeline_pytest.py" "$work/pytest/"
del_line=$(grep -n 'xsc: free before the wait' "$work/pytest/test_pipeline_pytest.py" | cut -d: -f1)
# The junit XML's failed and passed tests, and whether the failure text
# holds the report: its test line and the del's line.
verdict() {  # $1: junit XML; prints "failed=... passed=... report=yes|no"
  "$python" - "$1" "$del_line" <<'PY'
import re
import sys
import xml.etree.ElementTree as ET

failed, passed, report = [], [], "no"
for case in ET.parse(sys.argv[1]).iter("testcase"):
    problem = case.find("failure")
    if problem is None:
        problem = case.find("error")
    if problem is None and case.find("skipped") is None:
        passed.append(case.get("name"))
        continue
    if problem is None:
        continue
    failed.append(case.get("name"))
    text = (problem.get("message") or "") + (problem.text or "")
    if ("WARNING: xstream-check: unordered free" in text
            # pytest names the test from its rootdir, which may be above
            # the file's directory: any path before the file's name.
            and re.search(r"test: (\S*/)?test_pipeline_pytest\.py::" + re.escape(case.get("name")) + r"\n", text)
            and "test_pipeline_pytest.py:" + sys.argv[2] in text):
        report = "yes"
print("failed=%s passed=%s report=%s" % (",".join(sorted(failed)), ",".join(sorted(passed)), report))
PY
}
expected="failed=test_freed_before_the_default_stream_waits passed=test_waits_before_del report=yes"
run_pytest() {  # $1: name of the run, then pytest's extra arguments
  local name=$1
  shift
  (cd "$work/pytest" && "$python" -m pytest --xstream-check --xstream-check-dir "$work/reports-$name" \
     -p no:cacheprovider -rA --junitxml "$out/$name.xml" "$@" test_pipeline_pytest.py) \
    > "$out/$name.log" 2>&1
  local status=$?
  check "$name exits 1" $((status != 1)) "exit $status ($name.log)"
  local got
  got=$(verdict "$out/$name.xml" 2>&1)
  check "$name: only the buggy test fails, with the report (del at line $del_line)" \
    "$([ "$got" = "$expected" ]; echo $?)" "$got"
  grep -Eq "^  ([^ ]*/)?test_pipeline_pytest.py::test_freed_before_the_default_stream_waits: [0-9]+ finding\(s\)$" "$out/$name.log"
  check "$name: the summary lists the finding under the buggy test" $? "see $name.log"
  tar -czf "$out/$name-reports.tar.gz" -C "$work" "reports-$name" 2> /dev/null || true
}
run_pytest pytest
if "$python" -c 'import xdist' > /dev/null 2>&1; then
  run_pytest pytest-xdist -n 2
  grep -q "^merged report of 3 process(es)" "$out/pytest-xdist.log"
  check "pytest-xdist: the controller merged its workers' reports" $? "see pytest-xdist.log"
else
  note "unsupported: pytest -n 2 (pytest-xdist is not installed in $python's environment)"
fi

if [ $failures -eq 0 ]; then note "PASS"; else note "FAIL ($failures check(s))"; fi
[ $failures -eq 0 ]
