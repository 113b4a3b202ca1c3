"""pytest --xstream-check, end to end without a GPU: the tests of each
session below simulate a caching allocator's blocks on two streams through
the runtime's annotations (xsc_annotate_alloc/use/free through ctypes), so
the runtime checks them exactly as it checks PyTorch's blocks."""
import glob
import json
import os
from importlib.metadata import entry_points

import pytest

from xstream_check import _native

# The simulated allocator: the blocks are plain numbers, the streams opaque
# handles. Without the runtime in the process the calls do nothing.
SIM = '''
import ctypes

_lib = ctypes.CDLL(None)
PRODUCER, CONSUMER = 0x1000, 0x2000


def _call(name, *args):
    function = getattr(_lib, name, None)
    if function is not None:
        function(*args)


def alloc(block, stream=PRODUCER):
    _call("xsc_annotate_alloc", ctypes.c_void_p(block), ctypes.c_size_t(4096), ctypes.c_void_p(stream))


def use(block, stream, write=0):
    _call("xsc_annotate_use", ctypes.c_void_p(block), ctypes.c_size_t(4096), ctypes.c_void_p(stream), write)


def free(block, stream=PRODUCER):
    _call("xsc_annotate_free", ctypes.c_void_p(block), ctypes.c_void_p(stream))


def freed_too_early(block):
    """The seed's bug: read on the consumer stream, back to the producer's
    cache before the producer is ordered after the read."""
    alloc(block)
    use(block, CONSUMER)
    free(block)


def reused(block):
    """The producer takes the block again and writes it: the race."""
    alloc(block)
    use(block, PRODUCER, 1)
    free(block)


def one_stream(block):
    alloc(block)
    use(block, PRODUCER)
    free(block)
'''

PIPELINE = '''
from xsc_sim import freed_too_early, one_stream, reused


def test_buggy():
    freed_too_early(0x7f0000000000)
    reused(0x7f0000000000)


def test_clean():
    one_stream(0x7f0001000000)
    reused(0x7f0001000000)
'''


def plugin_args():
    """-p for the plugin where its entry point is not installed (a build
    tree); the installed wheel's entry point loads it by itself."""
    installed = any(ep.value == "xstream_check.pytest_plugin" for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "xstream_check.pytest_plugin"]


@pytest.fixture
def session(pytester, monkeypatch):
    """Runs `pytest ARGS` in a child process, in a directory holding the
    simulated allocator; short stacks keep the reports small."""
    monkeypatch.setenv("XSC_OPTIONS", "stack_depth=2")
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    pytester.makepyfile(xsc_sim=SIM)

    def run(*args):
        return pytester.runpytest_subprocess(*plugin_args(), "-p", "no:cacheprovider", *args,
                                             timeout=300)
    return run


def test_the_freeing_test_fails_with_the_report(pytester, session):
    pytester.makepyfile(test_pipe=PIPELINE)
    result = session("--xstream-check")
    result.assert_outcomes(failed=1, passed=1)
    assert result.ret == 1
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "xstream-check: re-executed with the runtime preloaded; reports in *",
        "*_ test_buggy _*",
        "xstream-check: 1 finding(s) in this test's call: a buffer freed during the test *",
        "WARNING: xstream-check: unordered free (pid=*)",
        "  test: test_pipe.py::test_buggy",
        "  Free of 0x7f0000000000 (4096 bytes) on stream 0x1000 *",
        "  is not ordered after the last use on stream 0x2000 by annotated use (read) *",
        "  The memory was allocated again: *",
        "*= xstream-check =*",
        "findings per test:",
        "  test_pipe.py::test_buggy: 1 finding(s)",
        "merged report of 1 process(es), reports in *",
        "xstream-check: merged 1 report(s)",
        "    test: test_pipe.py::test_buggy",
        "xstream-check: 1 distinct finding(s) (0 suppressed)",
        "FAILED test_pipe.py::test_buggy*",
    ])
    assert "test_pipe.py::test_clean" not in out


@pytest.mark.parametrize("tests, args, status, outcomes", [
    ("def test_clean():\n    one_stream(0x7f0001000000)\n", [], 0, {"passed": 1}),
    ("def test_fails():\n    one_stream(0x7f0001000000)\n    assert 1 == 2\n", [], 1, {"failed": 1}),
    ("def test_clean():\n    one_stream(0x7f0001000000)\n", ["-k", "no_such_test"], 5, {"deselected": 1}),
])
def test_without_findings_pytest_keeps_its_status(pytester, session, tests, args, status, outcomes):
    pytester.makepyfile(test_pipe="from xsc_sim import one_stream\n\n\n" + tests)
    result = session("--xstream-check", *args)
    assert result.ret == status
    result.assert_outcomes(**outcomes)
    result.stdout.fnmatch_lines(["xstream-check: no findings in 1 process report(s) in *"])
    result.stdout.no_fnmatch_line("*WARNING: xstream-check*")


def test_a_fixture_teardown_that_frees_too_early_errors_its_test(pytester, session):
    pytester.makepyfile(test_fixture='''
import pytest
from xsc_sim import PRODUCER, CONSUMER, alloc, free, reused, use


@pytest.fixture
def staging():
    alloc(0x7f0002000000)
    yield 0x7f0002000000
    free(0x7f0002000000)  # before the producer waits for the consumer
    reused(0x7f0002000000)


def test_reads_staging(staging):
    use(staging, CONSUMER)
''')
    result = session("--xstream-check")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([
        "*ERROR at teardown of test_reads_staging*",
        "xstream-check: 1 finding(s) in this test's teardown: *",
        "  test: test_fixture.py::test_reads_staging",
    ])


LATE = '''
from xsc_sim import freed_too_early, reused


def test_late():
    freed_too_early(0x7f0003000000)


def test_next():
    reused(0x7f0003000000)
'''


def test_a_free_judged_in_a_later_test_fails_the_session(pytester, session):
    # test_late's free is a bug only once test_next uses the memory again:
    # neither test's report shows it, the summary puts it under test_late
    # and the session fails.
    pytester.makepyfile(test_late=LATE)
    result = session("--xstream-check")
    result.assert_outcomes(passed=2)
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        "findings per test:",
        "  test_late.py::test_late: 1 finding(s) (1 found after the test had ended, *)",
        "    test: test_late.py::test_late",
    ])
    result.stdout.no_fnmatch_line("*test: test_late.py::test_next*")


def test_user_options_are_kept(pytester, session, monkeypatch):
    # strict=1 judges the free by itself: test_late fails at once.
    monkeypatch.setenv("XSC_OPTIONS", "stack_depth=2 strict=1")
    pytester.makepyfile(test_late=LATE)
    result = session("--xstream-check")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["*_ test_late _*", "  test: test_late.py::test_late"])


def test_an_already_preloaded_session_is_not_run_again(pytester, session, monkeypatch):
    monkeypatch.setenv("LD_PRELOAD", _native.runtime_library_path())
    monkeypatch.setenv("XSC_OPTIONS", "stack_depth=2 exitcode=0")
    pytester.makepyfile(test_pipe=PIPELINE)
    result = session("--xstream-check", "--xstream-check-dir", str(pytester.path / "reports"))
    result.assert_outcomes(failed=1, passed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        "xstream-check: the runtime was preloaded by the caller; reports in */reports",
        "  test: test_pipe.py::test_buggy",
    ])
    assert len(glob.glob(str(pytester.path / "reports" / "pytest-session.*.json"))) == 1


def test_xdist_workers_report_and_the_controller_merges(pytester, session):
    pytest.importorskip("xdist")
    pytester.makepyfile(test_pipe=PIPELINE, test_late=LATE, test_more='''
from xsc_sim import freed_too_early, one_stream, reused


def test_buggy_too():
    freed_too_early(0x7f0004000000)
    reused(0x7f0004000000)


def test_clean_too():
    one_stream(0x7f0005000000)
''')
    reports = pytester.path / "reports"
    # One module per worker, so test_late and test_next run in one process.
    result = session("--xstream-check", "-n", "2", "--dist", "loadfile",
                     "--xstream-check-dir", str(reports))
    result.assert_outcomes(failed=2, passed=4)
    assert result.ret == 1
    out = result.stdout.str()
    result.stdout.fnmatch_lines(["merged report of 3 process(es), reports in *",
                                 "xstream-check: merged 3 report(s)"])
    for line in ("  test_pipe.py::test_buggy: 1 finding(s)",
                 "  test_more.py::test_buggy_too: 1 finding(s)",
                 "  test_late.py::test_late: 1 finding(s) (1 found after the test had ended, "):
        assert line in out, line
    assert "xstream-check: 3 distinct finding(s) (0 suppressed)" in out
    # Each worker wrote its own report, with the findings of its own tests.
    workers = {}
    for path in glob.glob(str(reports / "pytest-gw*.json")):
        with open(path) as lines:
            tests = [json.loads(line).get("test") for line in lines]
        workers[os.path.basename(path).split(".")[0]] = [t for t in tests if t]
    assert sorted(workers) == ["pytest-gw0", "pytest-gw1"], workers
    assert sorted(sum(workers.values(), [])) == [
        "test_late.py::test_late", "test_more.py::test_buggy_too", "test_pipe.py::test_buggy"]


def test_without_the_option_nothing_happens(pytester, session):
    pytester.makepyfile(test_pipe=PIPELINE)
    result = session()
    result.assert_outcomes(passed=2)
    assert result.ret == 0
    result.stdout.no_fnmatch_line("xstream-check:*")
    result.stdout.no_fnmatch_line("*= xstream-check =*")
    result.stdout.no_fnmatch_line("*WARNING*")


@pytest.mark.parametrize("args, env, message", [
    (["--xstream-check-dir", "a:b"], {}, "*--xstream-check-dir: 'a:b' must not contain*"),
    ([], {"XSC_RUNTIME_LIBRARY": "/nonexistent/libxstream_check.so"},
     "*xstream-check: runtime library not found: /nonexistent/libxstream_check.so*"),
])
def test_bad_set_up_is_one_usage_error(pytester, session, monkeypatch, args, env, message):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    pytester.makepyfile(test_pipe=PIPELINE)
    result = session("--xstream-check", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


# CuPy's pool (the stand-in beside this file): the block of an array a
# "kernel" on the consumer stream read goes back to the producer stream's
# arena at the `del`, and the next allocation there gets it.
CUPY_STANDIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cupy_standin")
CUPY_TESTS = '''
import cupy

from xsc_sim import CONSUMER, PRODUCER, use

ON_PRODUCER = cupy.cuda.Stream(PRODUCER)


def test_drops_an_array_the_consumer_reads():
    with ON_PRODUCER:
        batch = cupy.empty(4096)
    use(batch.data.ptr, CONSUMER)
    del batch  # the free
    with ON_PRODUCER:
        scratch = cupy.empty(4096)
    use(scratch.data.ptr, PRODUCER, 1)


def test_one_stream():
    with ON_PRODUCER:
        batch = cupy.empty(4096)
    use(batch.data.ptr, PRODUCER, 1)
    del batch
'''


@pytest.mark.parametrize("preloaded", [False, True])
def test_cupy_pool_blocks_are_observed(pytester, session, monkeypatch, preloaded):
    monkeypatch.setenv("PYTHONPATH", CUPY_STANDIN, prepend=os.pathsep)
    if preloaded:
        # No autoload/ on PYTHONPATH: the plugin itself watches for CuPy.
        monkeypatch.setenv("LD_PRELOAD", _native.runtime_library_path())
        monkeypatch.setenv("XSC_OPTIONS", "stack_depth=2 exitcode=0")
    pytester.makepyfile(test_cupy=CUPY_TESTS)
    result = session("--xstream-check")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines([
        "*_ test_drops_an_array_the_consumer_reads _*",
        "WARNING: xstream-check: unordered free (pid=*)",
        "  Free of 0x7a0000000000 (4096 bytes) on stream 0x1000 *",
        "    #0 test_drops_an_array_the_consumer_reads *test_cupy.py:%d" % (
            CUPY_TESTS.lstrip("\n").splitlines().index("    del batch  # the free") + 1),
        "  is not ordered after the last use on stream 0x2000 by annotated use (read) *",
        "  The memory was allocated again: *",
    ])
    assert "test_cupy.py::test_one_stream: " not in result.stdout.str()
