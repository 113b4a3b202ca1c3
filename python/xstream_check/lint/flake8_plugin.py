"""flake8 plugin: the stream-ordering check as flake8 codes.

Entry point for pyproject.toml:

    [project.entry-points."flake8.extension"]
    XSC = "xstream_check.lint.flake8_plugin:XscChecker"

Without the package installed, a flake8 configuration can load it as a local
plugin:

    [flake8:local-plugins]
    extension =
        XSC = xstream_check.lint.flake8_plugin:XscChecker
    paths = path/to/xstream-check/python

Codes: XSC101 xstream-unordered-free, XSC102 xstream-free-before-wait,
XSC103 xstream-use-before-ready, XSC104 xstream-write-after-read,
XSC105 xstream-pending-at-return.
flake8 has no notes, so the first note's line goes into the message.
"""
from .report import (RULE_FREE_BEFORE_WAIT, RULE_PENDING_AT_RETURN, RULE_UNORDERED_FREE, RULE_USE_BEFORE_READY,
                     RULE_WRITE_AFTER_READ,
                     check_tree)

CODES = {RULE_UNORDERED_FREE: "XSC101", RULE_FREE_BEFORE_WAIT: "XSC102", RULE_USE_BEFORE_READY: "XSC103",
         RULE_WRITE_AFTER_READ: "XSC104", RULE_PENDING_AT_RETURN: "XSC105"}


class XscChecker:
    name = "xstream-check"
    version = "0.1.0"

    def __init__(self, tree, filename="(none)", lines=None):
        self.tree = tree
        self.filename = filename
        self.lines = lines

    def run(self):
        if self.lines is not None:
            source = "".join(self.lines)
        else:
            with open(self.filename, encoding="utf-8") as fh:
                source = fh.read()
        for f in check_tree(self.tree, self.filename, source):
            text = "%s %s [%s]" % (CODES[f.rule], f.message, f.rule)
            if f.notes:
                text += " (note: line %d: %s)" % (f.notes[0].line, f.notes[0].message)
            yield f.line, f.col - 1, text, type(self)
