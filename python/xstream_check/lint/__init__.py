"""The static stream-ordering check for PyTorch Python code: buffers freed
(del, rebinding, resize_(0), the end of a function) while another CUDA stream
may still use them, uses before another stream's write is ordered, writes
over another stream's pending use (also into a block fresh from another
stream's pool), and tensors left pending at a return. The analysis is stdlib
only; its ways in are `python -m xstream_check.lint`, the flake8 plugin
(flake8_plugin.py), the pre-commit hook and the xstream-lint driver."""
from .report import (RULE_FREE_BEFORE_WAIT, RULE_PENDING_AT_RETURN, RULE_UNORDERED_FREE, RULE_USE_BEFORE_READY,
                     RULE_WRITE_AFTER_READ, Finding, Note, ParseError, check_file, check_source, check_tree)

__all__ = ["RULE_FREE_BEFORE_WAIT", "RULE_PENDING_AT_RETURN", "RULE_UNORDERED_FREE", "RULE_USE_BEFORE_READY",
           "RULE_WRITE_AFTER_READ", "Finding", "Note", "ParseError", "check_file", "check_source", "check_tree"]
