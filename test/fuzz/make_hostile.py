#!/usr/bin/env python3
"""Writes hand-made hostile traces into DIR, for hostile-inputs.test.

They aim at the reader's and the checker's limits rather than at coverage:
nesting, record length, frame count, the extremes of every integer, bytes
that are not text, and valid traces with many streams, threads and stacks.
Files named broken_* must be rejected (exit 2, one line); the others are
valid and must replay (exit 0 or 66). Generated, not committed, because some
are large.
"""
import json
import os
import sys

HEADER = '{"format":"xstream-trace","version":1,"pid":77,"program":"hostile"}\n'
U64 = (1 << 64) - 1
U32 = (1 << 32) - 1


def lines(*records):
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    files = {
        "broken_deep_nesting.jsonl":
            HEADER + '{"t":"device_sync","x":' + "[" * 100000 + "]" * 100000 + "}\n",
        "broken_long_record.jsonl":
            HEADER + '{"t":"name","id":1,"str":"' + "a" * (17 << 20) + '"}\n',
        "broken_too_many_frames.jsonl":
            HEADER + lines({"t": "stack", "id": 1, "frames": [{"fn": "f"}] * 5000}),
        "broken_nul_byte.jsonl": HEADER + '{"t":"device_sync"}\0\n',
        "broken_float_address.jsonl":
            HEADER + '{"t":"alloc","a":1e3,"n":1,"s":1,"ak":"sync"}\n',
        "broken_pid_overflow.jsonl":
            '{"format":"xstream-trace","version":1,"pid":%d}\n' % U64,
        "broken_integer_overflow.jsonl":
            HEADER + '{"t":"alloc","a":%d0,"n":1,"s":1,"ak":"sync"}\n' % U64,
        "broken_lone_surrogate.jsonl":
            HEADER + '{"t":"name","id":1,"str":"\\ud800"}\n',
        "broken_size_at_limit.jsonl":
            HEADER + lines({"t": "alloc", "a": 0, "n": (1 << 50) + 1, "s": 1, "ak": "sync"}),
        "broken_many_undefined_stacks.jsonl":
            HEADER + lines(*({"t": "device_sync", "sk": i + 1} for i in range(20000))),
        "broken_header_twice.jsonl": HEADER + HEADER,
        "broken_utf8_bom.jsonl": "\ufeff" + HEADER,
        "max_ids.jsonl": HEADER + lines(
            {"t": "name", "id": U32, "str": "x"},
            {"t": "thread_name", "th": U32, "nm": U32},
            {"t": "stack", "id": U64, "frames": [{"fn": "f", "line": U32}]},
            {"t": "stream_create", "s": U64, "fl": "blocking", "sk": U64},
            {"t": "alloc", "a": U64 - 16, "n": 16, "s": U64, "ak": "stream_ordered", "th": U32},
            {"t": "record", "s": U64, "e": U64},
            {"t": "wait", "s": 0, "e": U64},
            {"t": "use", "a": U64 - 16, "n": 16, "s": 0, "ac": "write", "w": "kernel",
             "g": U64},
            {"t": "free", "a": U64 - 16, "s": U64, "fk": "stream_ordered"},
            {"t": "event_sync", "e": U64, "th": U32},
            {"t": "graph_launch", "s": U64, "g": U64, "nm": U32},
            {"t": "stream_destroy", "s": U64}),
        "duplicate_keys.jsonl":
            HEADER + '{"t":"alloc","t":"device_sync","a":1,"n":1,"s":1,"ak":"sync"}\n',
        "unknown_keys.jsonl":
            HEADER + '{"t":"device_sync","future":{"nested":[1,2,{"x":null}]},"z":1e308}\n',
        # Every allocation freed twice, used after free, freed on unknown
        # streams, completed without a deferred free: a checker that trusts
        # its input's consistency falls over here.
        "inconsistent.jsonl": HEADER + lines(*[r for i in range(2000) for r in (
            {"t": "alloc", "a": 4096 * (i % 50), "n": 8192, "s": i % 7, "ak": "caching"},
            {"t": "use", "a": 4096 * (i % 50) + 7, "n": 0, "s": i % 5, "ac": "read",
             "w": "memcpy"},
            {"t": "free", "a": 4096 * (i % 50), "s": i % 3, "fk": "caching", "d": i % 2 == 0},
            {"t": "free", "a": 4096 * (i % 50), "s": 99, "fk": "stream_ordered"},
            {"t": "free_done", "a": 4096 * (i % 50) + 1},
            {"t": "wait", "s": i % 7, "e": i},
            {"t": "record", "s": i % 11, "e": i % 13},
            {"t": "stream_destroy", "s": i % 5},
            {"t": "stream_sync", "s": i % 5})]),
        # Hundreds of streams and threads, a fresh stack per event.
        "many_agents.jsonl": HEADER + lines(*[r for i in range(1000) for r in (
            {"t": "stack", "id": i + 1, "frames": [{"fn": "f%d" % i, "file": "x.cu", "line": i}]},
            {"t": "stream_create", "s": 1000 + i, "fl": "non_blocking", "sk": i + 1,
             "th": (i * 4294967) % U32},
            {"t": "alloc", "a": (i + 1) << 20, "n": 4096, "s": 1000 + i, "ak": "stream_ordered",
             "th": i % 300, "sk": i + 1},
            {"t": "use", "a": (i + 1) << 20, "n": 0, "s": 1000 + (i * 7) % 1000, "ac": "write",
             "w": "kernel", "th": i % 300},
            {"t": "free", "a": (i + 1) << 20, "s": 1000 + i, "fk": "stream_ordered",
             "th": i % 300})]),
    }
    for name, text in files.items():
        with open(os.path.join(out, name), "w", encoding="utf-8", newline="") as f:
            f.write(text)
    print("wrote %d hostile traces to %s" % (len(files), out))


if __name__ == "__main__":
    main()
