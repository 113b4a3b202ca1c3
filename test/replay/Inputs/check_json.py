#!/usr/bin/env python3
"""Checks a report=json report: JSON Lines, one object per finding with the
documented fields, then exactly one summary object, last.

Usage: check_json.py REPORT
Prints one line per finding "KIND count=N fp=FINGERPRINT late_wait=yes|no
reuse=yes|no", with " test=NODEID" for a finding attributed to a test
(note-level results, latent free-before-wait, start with "latent ") and a final "summary findings=N suppressed=M parked=P latent=L"
line.
"""
import json
import re
import sys

FINDING_FIELDS = {"kind", "rule", "count", "alloc", "free", "use", "late_wait", "fix", "pid", "fingerprint",
                  "level", "latent", "reuse", "test"}
SITE_FIELDS = {"addr", "size", "stream", "kind", "thread", "stack"}
FRAME_FIELDS = {"function", "file", "line", "module", "pc"}


def fail(msg):
    print("json violation: " + msg)
    sys.exit(1)


def check_stack(stack, where):
    if not isinstance(stack, list):
        fail(where + " is not a list")
    for fr in stack:
        if set(fr) != FRAME_FIELDS:
            fail(where + " frame has fields %r" % sorted(fr))


def main():
    with open(sys.argv[1]) as f:
        lines = [l for l in f.read().split("\n") if l]
    objs = [json.loads(l) for l in lines]
    if not objs or "summary" not in objs[-1]:
        fail("the last line is not the summary object")
    for obj in objs[:-1]:
        missing = FINDING_FIELDS - set(obj)
        if missing:
            fail("finding lacks %r" % sorted(missing))
        if obj["rule"] != "xstream-" + obj["kind"]:
            fail("rule %r does not match kind %r" % (obj["rule"], obj["kind"]))
        if not re.fullmatch(r"[0-9a-f]{16}", obj["fingerprint"]):
            fail("fingerprint %r is not 16 hex digits" % obj["fingerprint"])
        if not SITE_FIELDS <= set(obj["alloc"]):
            fail("alloc lacks fields")
        check_stack(obj["alloc"]["stack"], "alloc.stack")
        if obj["kind"] != "use-before-ready":
            if not {"addr", "stream", "kind", "thread", "stack"} <= set(obj["free"]):
                fail("free lacks fields")
            check_stack(obj["free"]["stack"], "free.stack")
        elif obj["free"] is not None:
            fail("use-before-ready has a free")
        if not {"addr", "size", "stream", "name", "what", "access", "thread", "stack"} <= set(obj["use"]):
            fail("use lacks fields")
        check_stack(obj["use"]["stack"], "use.stack")
        if obj["late_wait"] is not None:
            check_stack(obj["late_wait"]["stack"], "late_wait.stack")
        if obj["level"] not in ("error", "note"):
            fail("level %r" % obj["level"])
        if obj["reuse"] is not None:
            check_stack(obj["reuse"]["use"]["stack"], "reuse.use.stack")
        if obj["test"] is not None and not (isinstance(obj["test"], str) and obj["test"]):
            fail("test %r is neither null nor a test's name" % obj["test"])
        print("%s%s count=%d fp=%s late_wait=%s reuse=%s%s" % (
            "latent " if obj["level"] == "note" else "", obj["kind"], obj["count"],
            obj["fingerprint"], "yes" if obj["late_wait"] else "no",
            "yes" if obj["reuse"] else "no",
            " test=" + obj["test"] if obj["test"] is not None else ""))
    s = objs[-1]["summary"]
    errors = sum(1 for o in objs[:-1] if o["level"] == "error")
    notes = len(objs) - 1 - errors
    if s["findings"] != errors:
        fail("summary counts %d findings, the report has %d" % (s["findings"], errors))
    if s["latent"] != notes:
        fail("summary counts %d latent, the report has %d" % (s["latent"], notes))
    print("summary findings=%d suppressed=%d parked=%d latent=%d" % (
        s["findings"], s["suppressed"], s["parked"]["max_parked"], s["latent"]))


if __name__ == "__main__":
    main()
