#!/usr/bin/env bash
# The pip route, as a new user takes it: build the wheel with
# `pip wheel . --no-build-isolation` (nothing reused: a fresh build tree),
# install it into a fresh venv with --no-deps, and from there replay the
# bundled PyTorch trace through the console script and python -m
# xstream_check; check the report, exit status 66, and what the package
# installed (the runtime found by `run`, the flake8 entry point); then run
# the pytest plugin's suite (test/wheel/plugin) from that venv, with pytest
# and pytest-xdist installed there from PyPI.
# Without a torch at build time the wheel has no adapter; --version says so.
# XSC_TEST_WHEEL=FILE checks a wheel built earlier instead of building one.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/xsc-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test-wheel: FAIL: $*" >&2; exit 1; }

cuda=${CUDAToolkit_ROOT:-/usr/local/cuda}
if [ ! -x "$cuda/bin/nvcc" ] || { [ ! -e "$cuda/include/cupti.h" ] &&
                                  [ ! -e "$cuda/extras/CUPTI/include/cupti.h" ]; }; then
  echo "test-wheel: UNSUPPORTED: no CUDA toolkit with CUPTI headers at $cuda (the wheel needs one)"
  exit 0
fi

# The builder's own environment: a scikit-build-core already installed for
# python3 is used, else it comes from PyPI.
python3 -m venv --system-site-packages "$work/build-env"
"$work/build-env/bin/python" -c "import scikit_build_core" 2>/dev/null \
  || "$work/build-env/bin/python" -m pip install -q scikit-build-core \
  || fail "cannot install scikit-build-core from PyPI"
if [ -n "${XSC_TEST_WHEEL:-}" ]; then
  wheel=$XSC_TEST_WHEEL  # a wheel built earlier: only the installed checks
else
  start=$(date +%s)
  "$work/build-env/bin/python" -m pip wheel -q "$root" --no-build-isolation --no-deps \
    -w "$work/dist" -C build-dir="$work/build" > "$work/build.log" 2>&1 \
    || { tail -40 "$work/build.log" >&2; fail "pip wheel"; }
  wheel=$(ls "$work"/dist/xstream_check-*-py3-none-linux_*.whl)
  echo "test-wheel: built $(basename "$wheel") in $(($(date +%s) - start)) s," \
       "$(du -k "$wheel" | cut -f1) KiB"
fi

python3 -m venv "$work/env"
"$work/env/bin/python" -m pip install -q --no-deps "$wheel" || fail "pip install of the wheel"
for f in bin/xstream-check lib/libxstream_check.so lib/libxstream_python.so lib/xstream_check/libdw.so.1 \
         lint/flake8_plugin.py _build_info.py autoload/sitecustomize.py \
         autoload/xstream_check_cupy.py; do
  [ -e "$work/env/lib/python3"*/site-packages/xstream_check/$f ] || fail "wheel lacks xstream_check/$f"
done
"$work/env/bin/python" -m xstream_check --version || fail "python -m xstream_check --version"

# Outside the source tree: nothing may come from python/ here.
cd "$work"
trace="$root/examples/traces/torch_buggy.jsonl"
check_report() {  # $1: what ran, $2: its exit status, $3: its output
  [ "$2" -eq 66 ] || { cat "$3" >&2; fail "$1 exited $2, expected 66"; }
  grep -q "WARNING: xstream-check: unordered free" "$3" || fail "$1: no unordered free reported"
  grep -q "SUMMARY: xstream-check: unordered-free .*pipelines.py:83 in run_buggy" "$3" \
    || fail "$1: the summary does not name run_buggy at pipelines.py:83"
  grep -q "fix: record an event on stream 0" "$3" || fail "$1: no fix given"
}
rc=0; "$work/env/bin/xstream-check" replay "$trace" > script.out 2>&1 || rc=$?
check_report "xstream-check replay" $rc script.out
rc=0; "$work/env/bin/python" -m xstream_check replay "$trace" > module.out 2>&1 || rc=$?
check_report "python -m xstream_check replay" $rc module.out
cmp -s script.out module.out || fail "the console script and python -m xstream_check differ"

# `run` preloads the runtime installed beside the program.
preload=$("$work/env/bin/xstream-check" run -- /bin/sh -c 'echo "$LD_PRELOAD"') \
  || fail "xstream-check run -- /bin/sh"
case "$preload" in
  "$work"/env/lib/python3*/site-packages/xstream_check/lib/libxstream_check.so*) ;;
  *) fail "run preloads '$preload', not the installed runtime" ;;
esac
# ... and puts the package's Python start-up code (autoload/) first on PYTHONPATH.
pythonpath=$("$work/env/bin/xstream-check" run -- /bin/sh -c 'echo "$PYTHONPATH"') \
  || fail "xstream-check run -- /bin/sh"
case "$pythonpath" in
  "$work"/env/lib/python3*/site-packages/xstream_check/autoload*) ;;
  *) fail "run sets PYTHONPATH='$pythonpath', not the installed autoload/ first" ;;
esac

"$work/env/bin/python" - <<'PY' || fail "flake8.extension entry point"
from importlib.metadata import entry_points
(ep,) = [e for e in entry_points(group="flake8.extension") if e.name == "XSC"]
assert ep.load().__name__ == "XscChecker", ep
PY
# pytest --xstream-check from the installed package, through its pytest11
# entry point: the plugin's suite, copied out of the source tree so that
# nothing comes from python/. pytest is needed; without pytest-xdist the
# suite's xdist test is skipped, and said so here.
"$work/env/bin/python" -m pip install -q pytest > pip-pytest.log 2>&1 \
  || { cat pip-pytest.log >&2; fail "cannot install pytest from PyPI"; }
xdist=yes
if ! "$work/env/bin/python" -m pip install -q pytest-xdist > pip-xdist.log 2>&1; then
  xdist=no
  echo "test-wheel: UNSUPPORTED: pytest-xdist cannot be installed ($(tail -1 pip-xdist.log));" \
       "the plugin's xdist test is skipped"
fi
"$work/env/bin/python" - <<'PY' || fail "pytest11 entry point"
from importlib.metadata import entry_points
(ep,) = [e for e in entry_points(group="pytest11") if e.value == "xstream_check.pytest_plugin"]
assert ep.load().__name__ == "xstream_check.pytest_plugin", ep
PY
cp -r "$root/test/wheel/plugin" "$work/plugin"
rc=0
(cd "$work/plugin" && env -u XSC_RUNTIME_LIBRARY -u XSC_PROGRAM -u XSC_OPTIONS -u LD_PRELOAD \
   "$work/env/bin/python" -m pytest -p no:cacheprovider -q -rs --basetemp="$work/pytest-tmp" \
   test_pytest_plugin.py) > plugin.out 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat plugin.out >&2; fail "the pytest plugin's suite (exit $rc)"; }
if [ $xdist = yes ] && grep -q "skipped" plugin.out; then
  cat plugin.out >&2; fail "the plugin's xdist test was skipped although pytest-xdist is installed"
fi
echo "test-wheel: pytest plugin: $(tail -1 plugin.out)"
echo "test-wheel: PASS"
