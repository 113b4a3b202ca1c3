"""The Python check's interfaces that other code depends on: the library
calls, the JSON the xstream-lint driver reads, the flake8 checker class."""
import ast
import json
import os
import subprocess
import sys
import textwrap

import pytest

from xstream_check.lint import RULE_FREE_BEFORE_WAIT, RULE_UNORDERED_FREE, RULE_WRITE_AFTER_READ, check_source
from xstream_check.lint.flake8_plugin import XscChecker

INPUTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py")

BUGGY = textwrap.dedent("""\
    import torch


    def step(side):
        buf = torch.empty(8, device="cuda")
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            buf.add_(1)
        del buf
    """)


def test_finding_fields():
    findings, error = check_source(BUGGY, "step.py")
    assert error is None
    assert len(findings) == 1
    f = findings[0]
    assert (f.rule, f.path, f.line, f.col) == (RULE_UNORDERED_FREE, "step.py", 9, 5)
    assert f.message.startswith("'buf' is freed on the current stream while stream 'side'")
    assert [(n.line, n.col) for n in f.notes] == [(8, 9)]
    assert f.identity == "step|'buf'|the current stream|stream 'side'"


def test_identity_does_not_move_with_lines():
    moved, _ = check_source("# one\n# two\n" + BUGGY, "step.py")
    original, _ = check_source(BUGGY, "step.py")
    assert moved[0].line == original[0].line + 2
    assert moved[0].identity == original[0].identity


def test_the_fix_is_clean():
    fixed = BUGGY.replace("    del buf", "    torch.cuda.current_stream().wait_stream(side)\n    del buf")
    assert check_source(fixed, "step.py") == ([], None)


def test_late_wait_rule():
    late = BUGGY.replace("    del buf", "    done = side.record_event()\n    del buf\n"
                         "    torch.cuda.current_stream().wait_event(done)")
    findings, _ = check_source(late, "step.py")
    assert [f.rule for f in findings] == [RULE_FREE_BEFORE_WAIT]
    assert findings[0].notes[0].message == "move this wait before the del"


def test_parse_error():
    findings, error = check_source("def f(:\n", "bad.py")
    assert findings == []
    assert (error.path, error.line) == ("bad.py", 1)


@pytest.mark.parametrize("source", ["", "x = 1\n", "stream = None\n", "async def f():\n    await g()\n"])
def test_nothing_to_report(source):
    assert check_source(source, "f.py") == ([], None)


def test_stats():
    stats = {}
    check_source(BUGGY, "step.py", stats)
    assert stats == {"functions": 2, "frees": 1, "side_stream_uses": 1}


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-m", "xstream_check.lint", *args], capture_output=True,
                          text=True, env=env)


def test_json_for_the_driver(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    out = run_cli("--format=json", os.path.join(INPUTS, "seed_buggy.py"), str(bad))
    assert out.returncode == 2
    log = json.loads(out.stdout)
    assert [e["line"] for e in log["errors"]] == [1]
    assert [(f["rule"], f["line"], f["col"]) for f in log["findings"]] == [
        (RULE_UNORDERED_FREE, 28, 9), (RULE_UNORDERED_FREE, 33, 5)]
    assert set(log["findings"][0]) == {"rule", "path", "line", "col", "message", "notes", "identity"}
    assert set(log["findings"][0]["notes"][0]) == {"path", "line", "col", "message"}


def test_cli_exit_status():
    assert run_cli(os.path.join(INPUTS, "seed_stall.py")).returncode == 0
    assert run_cli(os.path.join(INPUTS, "seed_buggy.py")).returncode == 1
    missing = run_cli("no_such_file.py")
    assert missing.returncode == 2
    assert missing.stderr == "xstream-lint: error: no such file 'no_such_file.py'\n"
    assert run_cli("--output=x.sarif", "f.py").returncode == 2


def test_flake8_checker_without_flake8():
    tree = ast.parse(BUGGY)
    results = list(XscChecker(tree, "step.py", BUGGY.splitlines(True)).run())
    assert len(results) == 1
    line, col, text, kind = results[0]
    assert (line, col, kind) == (9, 4, XscChecker)
    assert text.startswith("XSC101 'buf' is freed")
    assert "(note: line 8:" in text


def test_write_into_a_block_of_another_streams_pool():
    unwaited = BUGGY.replace("    side.wait_stream(torch.cuda.current_stream())\n", "")
    findings, _ = check_source(unwaited, "step.py")
    assert [(f.rule, f.line) for f in findings] == [(RULE_WRITE_AFTER_READ, 7), (RULE_UNORDERED_FREE, 8)]
    assert findings[0].message.startswith("'buf' is written on stream 'side' into a block allocated from the pool "
                                          "of the current stream")
    assert [(n.line, n.col) for n in findings[0].notes] == [(5, 11)]
