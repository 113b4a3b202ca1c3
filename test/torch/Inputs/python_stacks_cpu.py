"""Python stacks read without the GIL, through a stand-in host API (no GPU).

Usage: python_stacks_cpu.py ADAPTER.so

The adapter's launch-stack entry point (the capture the allocator's context
recorder makes too) is called through ctypes, which releases the GIL around
a foreign call, as a PyTorch operator does around its kernels and
allocations; and through ctypes.PyDLL, which keeps it. The adapter's
counters say how often it took the GIL. Prints one PASS or FAIL line per
claim and a count of failures.
"""
import ctypes
import os
import sys
import threading

import torch  # noqa: F401  (the adapter checks the loaded torch's version)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_host_api import FakeRuntime  # noqa: E402

failures = 0


def claim(what, ok, detail=""):
    global failures
    if not ok:
        failures += 1
    print(f"{'PASS' if ok else 'FAIL'} {what}" + (f" ({detail})" if detail and not ok else ""))


stacks = [None]  # interned by the stand-in runtime: id -> frames


def intern(frames, n):
    stacks.append([(frames[i].function.decode(), frames[i].file.decode(), frames[i].line)
                   for i in range(n)])
    return len(stacks) - 1


rt = FakeRuntime(sys.argv[1], intern=intern)
claim("attached", rt.attach_result == 0, rt.attach_result)

released = ctypes.CDLL(sys.argv[1])  # the GIL is released around each call
held = ctypes.PyDLL(sys.argv[1])     # the GIL is kept
for library in (released, held):
    library.xsc_torch_launch_stack.restype = ctypes.c_uint32


def counts():
    """(captures that took the GIL, captures answered without it) so far."""
    words = rt.counters()
    return int(words["stacks_gil_taken"]), int(words["stacks_known_without_gil"])


def top_line(stack):
    return stacks[stack][0][2] if 0 < stack < len(stacks) else 0


def through(fn):
    return fn()  # probe: through


def probe_line(tag):
    """The line of this file marked with `# probe: TAG`."""
    marker = "# probe: " + tag
    return next(i for i, line in enumerate(open(__file__), 1) if line.rstrip().endswith(marker))


THROUGH = probe_line("through")

# The first captures take the GIL and check the frame records against the C
# API; from the same frames, the ones after the check read them without it.
taken_before, known_before = counts()
ids = [through(released.xsc_torch_launch_stack) for _ in range(80)]
taken, known = counts()
taken, known = taken - taken_before, known - known_before
claim("every capture named the same stack", len(set(ids)) == 1 and ids[0] != 0, set(ids))
claim("its innermost frame is the line that called", top_line(ids[0]) == THROUGH,
      stacks[ids[0]][0] if ids[0] else None)
claim("the GIL was taken only while the records were checked", 0 < taken < 80, taken)
claim("the captures after the check were answered without the GIL", known == 80 - taken,
      (taken, known))

# Frames never seen are named once, taking the GIL; then without it. A
# thread holding the GIL never counts as taking it.
answers = []
marks = [counts()]
for fn in (released.xsc_torch_launch_stack, released.xsc_torch_launch_stack,
           held.xsc_torch_launch_stack):
    answers.append(through(fn))
    marks.append(counts())
steps = [(b[0] - a[0], b[1] - a[1]) for a, b in zip(marks, marks[1:])]
claim("new frames, GIL released: named, taking the GIL",
      answers[0] not in (0, ids[0]) and top_line(answers[0]) == THROUGH and steps[0] == (1, 0),
      (answers, steps))
claim("the same frames again, GIL released: the same stack, without the GIL",
      answers[1] == answers[0] and steps[1] == (0, 1), (answers, steps))
claim("the same frames, GIL held: the same stack, nothing taken",
      answers[2] == answers[0] and steps[2] == (0, 0), (answers, steps))

# Threads capturing at once, each through the GIL released, while the
# others run Python (and allocate, so the cycle collector runs): each reads
# its own frames, and every capture names its own thread's line.
THREAD_LINE = probe_line("thread")


def capture_in_thread(results, index):
    junk = []
    for n in range(2000):
        results[index].append(released.xsc_torch_launch_stack())  # probe: thread
        junk.append([n] * 8)
        if len(junk) > 64:
            junk.clear()


threads_results = [[] for _ in range(4)]
workers = [threading.Thread(target=capture_in_thread, args=(threads_results, i))
           for i in range(4)]
taken_before, known_before = counts()
for w in workers:
    w.start()
for w in workers:
    w.join()
taken, known = counts()
tops = {top_line(stack) for result in threads_results for stack in result}
claim("four threads at once: every capture named its thread's line", tops == {THREAD_LINE},
      tops)
claim("four threads at once: nearly every capture without the GIL",
      known - known_before >= 4 * 2000 - 16, (taken - taken_before, known - known_before))

print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
