"""pytest --xstream-check: each test that frees a buffer before its
allocation stream is ordered after another stream's use of it fails, with
xstream-check's report as its failure text (docs/pytest.md).

How it runs:
  * Without the runtime in the process, the whole session is run again in a
    child pytest with libxstream_check.so preloaded and XSC_OPTIONS set to
    write one JSON report per process into the session's report directory.
    The child's exit status is the session's. With the runtime already
    preloaded (`xstream-check run -- pytest --xstream-check`, or LD_PRELOAD
    set by hand) the session runs as it is.
  * Each test names itself to the runtime (xsc_set_current_test) from the
    start of its setup to the end of its teardown. Findings are attributed
    to the test current at the free.
  * After each phase (setup, call, teardown) the plugin asks the runtime for
    the findings attributed to the test that it has not shown yet
    (xsc_findings_report), and fails that phase's report with their text.
  * At the end each process writes its findings as a JSON report; under
    pytest-xdist each worker writes its own and hands the path to the
    controller, which merges them with `xstream-check merge` and prints the
    findings per test in the terminal summary.

Installed with the package as a pytest11 entry point: it does nothing unless
--xstream-check is given.
"""
import ctypes
import json
import os
import subprocess
import sys
import tempfile

import pytest

from . import _native

# The session's report directory, set for the child session and inherited
# by pytest-xdist workers and anything else the tests start.
DIR_ENV = "XSC_PYTEST_DIR"
# workeroutput key: the path of a worker's JSON report.
WORKER_REPORT = "xstream_check_report"
# user_properties key: how many findings a test's report was failed with.
FAILED_WITH = "xstream_check_findings"


def pytest_addoption(parser):
    group = parser.getgroup("xstream-check", "cross-stream buffer misuse (xstream-check)")
    group.addoption(
        "--xstream-check", action="store_true", dest="xstream_check",
        help="run the session under xstream-check's runtime and fail each test that frees a "
             "CUDA buffer before the allocation stream is ordered after another stream's use "
             "of it")
    group.addoption(
        "--xstream-check-dir", dest="xstream_check_dir", metavar="DIR",
        help="directory for the per-process reports (default: a new temporary directory)")


class Runtime:
    """The test API of a libxstream_check.so loaded into this process
    (runtime/include/xstream_check/annotations.h), through ctypes."""

    def __init__(self, lib):
        self._set_current_test = lib.xsc_set_current_test
        self._set_current_test.argtypes = [ctypes.c_char_p]
        self._set_current_test.restype = ctypes.c_int
        self._findings_report = lib.xsc_findings_report
        self._findings_report.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                                          ctypes.POINTER(ctypes.c_size_t)]
        self._findings_report.restype = ctypes.c_void_p
        self._release_report = lib.xsc_release_report
        self._release_report.argtypes = [ctypes.c_void_p]
        self._release_report.restype = None

    def set_current_test(self, nodeid):
        """False when the runtime is not checking (its options were bad)."""
        return self._set_current_test(nodeid.encode("utf-8") if nodeid else None) == 0

    def findings(self, nodeid, report_format="text", first=0):
        """(report, total): the report of the findings attributed to `nodeid`
        (None: every finding) from the `first`-th on, and how many there are
        in all; (None, 0) when the runtime is not checking."""
        total = ctypes.c_size_t(0)
        report = self._findings_report(nodeid.encode("utf-8") if nodeid is not None else None,
                                       report_format.encode("ascii"), first, ctypes.byref(total))
        if not report:
            return None, 0
        try:
            return ctypes.string_at(report).decode("utf-8", "replace"), total.value
        finally:
            self._release_report(report)


def loaded_runtime():
    """The runtime when it is in this process (preloaded), else None."""
    try:
        lib = ctypes.CDLL(None)
        return Runtime(lib)
    except (OSError, AttributeError):
        return None


def check_directory(path):
    # XSC_OPTIONS separates its items with ':', ',' and spaces.
    if any(c in path for c in ": ,"):
        raise pytest.UsageError("--xstream-check-dir: %r must not contain ':', ',' or spaces "
                                "(it becomes an XSC_OPTIONS item)" % path)
    os.makedirs(path, exist_ok=True)
    return os.path.abspath(path)


def exit_status_of(returncode):
    """A child's status as a shell reports it: 128+N when killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """Runs the session again under the runtime when it is not loaded."""
    if not config.option.xstream_check or config.option.help or config.option.version:
        return None
    if loaded_runtime() is not None:
        return None  # preloaded: this process is the session to check
    if os.environ.get(DIR_ENV):
        raise pytest.UsageError(
            "xstream-check: the runtime is not loaded in the re-executed session (LD_PRELOAD=%s)"
            % os.environ.get("LD_PRELOAD", ""))
    library = _native.runtime_library_path()
    if not os.path.isfile(library):
        raise pytest.UsageError(
            "xstream-check: runtime library not found: %s (pip install xstream-check, or set "
            "XSC_RUNTIME_LIBRARY)" % library)
    directory = check_directory(config.option.xstream_check_dir
                                or tempfile.mkdtemp(prefix="xstream-check-pytest-"))
    env = dict(os.environ)
    env["LD_PRELOAD"] = library + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    env["PYTHONPATH"] = os.pathsep.join(
        [_native.autoload_dir()] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    # The user's options first, so that these win: a JSON report per process
    # for the merge, and exitcode=0 so that a process with findings keeps
    # its own status (an xdist worker exiting 66 would look like a crash;
    # the session fails through its failed tests and its summary instead).
    items = [env.get("XSC_OPTIONS", ""), "report=json",
             "log_path=" + os.path.join(directory, "xsc"), "exitcode=0"]
    env["XSC_OPTIONS"] = " ".join(item for item in items if item)
    env[DIR_ENV] = directory
    args = [sys.executable, "-m", "pytest"] + list(config.invocation_params.args)
    sys.stdout.flush()
    sys.stderr.flush()
    child = subprocess.Popen(args, cwd=str(config.invocation_params.dir), env=env)
    while True:
        try:
            return exit_status_of(child.wait())
        except KeyboardInterrupt:
            # ^C reached the child as well (one process group): let it end
            # its session and report.
            continue


def pytest_configure(config):
    if not config.option.xstream_check:
        return
    runtime = loaded_runtime()
    if runtime is None:
        return  # pytest_cmdline_main ran the session elsewhere, or was bypassed
    _native.watch_memory_pools()
    config.pluginmanager.register(XstreamCheckSession(config, runtime), "xstream-check-session")


class XstreamCheckSession:
    """The plugin's work in a process that has the runtime loaded: a pytest
    session on its own, an xdist controller or an xdist worker."""

    def __init__(self, config, runtime):
        self.config = config
        self.runtime = runtime
        self.worker_id = getattr(config, "workerinput", {}).get("workerid")
        self.reexecuted = bool(os.environ.get(DIR_ENV))
        directory = os.environ.get(DIR_ENV) or config.option.xstream_check_dir
        if not directory:
            directory = tempfile.mkdtemp(prefix="xstream-check-pytest-")
        self.directory = check_directory(directory)
        # Workers started from here write their reports here too.
        os.environ[DIR_ENV] = self.directory
        if not runtime.set_current_test(None):
            raise pytest.UsageError("xstream-check: the runtime is loaded but not checking (its "
                                    "message above says why)")
        self.shown = {}           # nodeid -> findings shown in its reports
        self.reports = []         # JSON reports to merge (this process's, workers')
        self.failed_tests = {}    # nodeid -> findings its reports were failed with
        self.summary = None       # (per-test lines, merge output), for the terminal

    # ---- every process ------------------------------------------------------

    def pytest_report_header(self, config):
        how = ("re-executed with the runtime preloaded" if self.reexecuted
               else "the runtime was preloaded by the caller")
        return "xstream-check: %s; reports in %s" % (how, self.directory)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        # From the start of setup to the end of teardown: fixtures' frees
        # belong to the test that set them up or tore them down.
        self.runtime.set_current_test(item.nodeid)
        try:
            yield
        finally:
            self.runtime.set_current_test(None)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        # Asked after every phase: a test's findings appear as the checker
        # finds them, in the live session (the per-process report is
        # written only at exit, too late to fail a test). Asked from the
        # runtime rather than read from a log for that reason.
        shown = self.shown.get(item.nodeid, 0)
        text, total = self.runtime.findings(item.nodeid, "text", shown)
        if text is None or total <= shown:
            return
        self.shown[item.nodeid] = total
        new = total - shown
        report.user_properties.append((FAILED_WITH, new))
        message = ("xstream-check: %d finding(s) in this test's %s: a buffer freed during the test "
                   "before its allocation stream was ordered after another stream's use of it\n%s"
                   % (new, report.when, text))
        if report.passed:
            report.outcome = "failed"
            report.longrepr = message
        else:
            report.sections.append(("xstream-check (%s)" % report.when, message))

    def pytest_sessionfinish(self, session):
        # Before xdist's own hook ends the worker: the report goes to the
        # controller with the worker's output.
        name = "pytest-%s.%d.json" % (self.worker_id or "session", os.getpid())
        path = os.path.join(self.directory, name)
        text, _ = self.runtime.findings(None, "json")
        if text is None:
            return
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
        if self.worker_id is not None:
            self.config.workeroutput[WORKER_REPORT] = path
            return
        self.reports.insert(0, path)
        self.summary = self.merge_reports()
        findings = sum(len(found) for found in self.summary[0].values())
        if findings and session.exitstatus == pytest.ExitCode.OK:
            # Findings no test report carried (one judged after its test had
            # passed, one outside any test) still fail the session.
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    # ---- the xdist controller and a session on its own ----------------------

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        path = getattr(node, "workeroutput", {}).get(WORKER_REPORT)
        if path:
            self.reports.append(path)

    def pytest_runtest_logreport(self, report):
        for key, value in report.user_properties:
            if key == FAILED_WITH:
                self.failed_tests[report.nodeid] = self.failed_tests.get(report.nodeid, 0) + value

    def merge_reports(self):
        """({test: [site, ...]}, merge's output) over the session's reports."""
        per_test = {}
        for path in self.reports:
            with open(path, encoding="utf-8") as lines:
                for line in lines:
                    finding = json.loads(line)
                    if "summary" in finding or finding.get("level") != "error":
                        continue
                    per_test.setdefault(finding.get("test"), []).append(
                        "%s %s" % (finding["kind"], finding["site"]))
        program = _native.binary_path()
        try:
            merged = subprocess.run([program, "merge"] + self.reports, capture_output=True,
                                    text=True, check=False)
            output = merged.stdout + merged.stderr
        except OSError as error:
            output = "xstream-check: cannot run %s merge: %s\n" % (program, error.strerror)
        return per_test, output

    def pytest_terminal_summary(self, terminalreporter):
        if self.summary is None:
            return
        per_test, merged = self.summary
        write = terminalreporter.write_line
        terminalreporter.section("xstream-check")
        if not per_test:
            write("xstream-check: no findings in %d process report(s) in %s"
                  % (len(self.reports), self.directory))
            return
        write("findings per test:")
        for test, sites in per_test.items():
            late = len(sites) - self.failed_tests.get(test, 0)
            if test is None:
                why = " (outside any test: at collection, or after the last test)"
            elif late > 0:
                why = (" (%d found after the test had ended, when a later test used the memory "
                       "again: the session fails)" % late)
            else:
                why = ""
            write("  %s: %d finding(s)%s" % (test or "<no test>", len(sites), why))
            for site in sites:
                write("    %s" % site)
        write("merged report of %d process(es), reports in %s:" % (len(self.reports), self.directory))
        for line in merged.splitlines():
            write(line)
