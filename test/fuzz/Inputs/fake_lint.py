#!/usr/bin/env python3
"""A stand-in for xstream-lint that misbehaves on demand (FAKE_LINT_MODE),
so lint-mutate-selftest.test can show lint_mutate.py catches each failure."""
import os
import signal
import sys
import time

mode = os.environ.get("FAKE_LINT_MODE", "ok")
if mode == "crash":
    os.kill(os.getpid(), signal.SIGSEGV)
elif mode == "hang":
    time.sleep(60)
elif mode == "exit3":
    sys.exit(3)
sys.exit(1)
