#!/usr/bin/env python3
"""How many of a recorded trace's uses repeat a use the checker already saw,
with nothing in between that could change a verdict about it.

    python3 bench/replay/repeated_uses.py TRACE [TRACE...]     (.gz read too)

A use repeats an earlier one when it has the same address, size, stream (or
host thread) and access, and since that earlier use no event other than a
use has arrived and no use of another stream or access has touched an
overlapping range. Such a use leaves every check's verdict as it was: the
orderings a later free, wait or read is compared with cover both uses or
neither. Counted over the second half of the trace (the steady state), under
two windows: one that every non-use event ends, and one that allocations
do not end (an allocation cannot overlap a live range a use still names).

It measures how many events a filter for repeated uses could spare the
checker; the runtime has no such filter.
"""
import gzip
import json
import sys


def read_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                record = json.loads(line)
                if number == 1:
                    if record.get("format") != "xstream-trace":
                        raise ValueError("not an xstream-check trace (no header)")
                    continue
                if record.get("t") in ("name", "stack"):
                    continue
                yield record
    except (OSError, ValueError, EOFError) as e:
        sys.exit("repeated_uses.py: %s: %s" % (path, e))


def repeated(events, window_ends):
    """Uses that repeat one of the current window's uses."""
    window = {}  # (addr, size, stream, access) -> (begin, end)
    count = 0
    for e in events:
        if e["t"] != "use":
            if window_ends(e["t"]):
                window.clear()
            continue
        key = (e["a"], e.get("n", 0), e.get("s"), e.get("ac"))
        if key in window:
            count += 1
            continue
        begin, end = e["a"], e["a"] + max(e.get("n", 0), 1)
        # Another stream's or access's use of an overlapping range: the
        # uses before it may now be judged differently.
        if any(b < end and begin < en for k, (b, en) in window.items() if k[2:] != key[2:]):
            window.clear()
        window[key] = (begin, end)
    return count


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: repeated_uses.py TRACE [TRACE...]")
    for path in sys.argv[1:]:
        events = list(read_events(path))
        steady = events[len(events) // 2:]
        uses = sum(1 for e in steady if e["t"] == "use")
        every = repeated(steady, lambda kind: True)
        not_allocs = repeated(steady, lambda kind: kind != "alloc")
        print("%s: %d events in the second half, %d uses; repeated: %d (%.0f%% of the uses) when every "
              "other event ends the window, %d (%.0f%%) when allocations do not" % (
                  path, len(steady), uses, every, 100.0 * every / max(uses, 1), not_allocs,
                  100.0 * not_allocs / max(uses, 1)))


if __name__ == "__main__":
    main()
