#!/usr/bin/env python3
"""Writes, to stdout, a trace whose finding lies among thousands of ops.

A block allocated on stream P is read once on stream C among 3000 other
kernels on C and then freed on P without a wait (an unordered free); P then
runs 2000 more kernels and reuses the block. The timeline picture of the
finding must stay bounded (a few hundred ops, the rest elided).
"""
import json

P, C = 0x1100, 0x2200
BLOCK, OTHER = 0x7F0000000000, 0x7F0100000000
MiB = 1 << 20
FILE = "/src/examples/cuda/long.cu"

lines = [dict(format="xstream-trace", version=1, pid=7001, program="long_pipeline")]
lines.append(dict(t="stack", id=1, frames=[dict(fn="main", file=FILE, line=10)]))
lines.append(dict(t="stack", id=2, frames=[dict(fn="step", file=FILE, line=20)]))
lines.append(dict(t="stack", id=3, frames=[dict(fn="consume", file=FILE, line=30)]))
lines.append(dict(t="stack", id=4, frames=[dict(fn="release", file=FILE, line=40)]))
lines.append(dict(t="stack", id=5, frames=[dict(fn="refill", file=FILE, line=50)]))
for i, name in enumerate(["produce", "step_kernel", "consume", "refill"], start=1):
    lines.append(dict(t="name", id=i, str=name))


def use(addr, stream, access, name, stack):
    lines.append({"t": "use", "sk": stack, "a": addr, "n": MiB, "s": stream, "ac": access, "w": "kernel",
                  "nm": name})


lines.append({"t": "stream_create", "sk": 1, "s": P, "fl": "non_blocking"})
lines.append({"t": "stream_create", "sk": 1, "s": C, "fl": "non_blocking"})
lines.append({"t": "alloc", "sk": 1, "a": OTHER, "n": MiB, "s": C, "ak": "stream_ordered"})
lines.append({"t": "alloc", "sk": 1, "a": BLOCK, "n": MiB, "s": P, "ak": "stream_ordered"})
use(BLOCK, P, "write", 1, 1)
lines.append({"t": "record", "sk": 1, "s": P, "e": 1})
lines.append({"t": "wait", "sk": 1, "s": C, "e": 1})
for i in range(1500):
    use(OTHER, C, "write", 2, 2)
use(BLOCK, C, "read", 3, 3)
for i in range(1500):
    use(OTHER, C, "write", 2, 2)
lines.append({"t": "free", "sk": 4, "a": BLOCK, "s": P, "fk": "stream_ordered"})
for i in range(2000):
    use(OTHER + 2 * MiB, P, "write", 2, 2)
lines.append({"t": "alloc", "sk": 5, "a": BLOCK, "n": MiB, "s": P, "ak": "stream_ordered"})
use(BLOCK, P, "write", 4, 5)
lines.append({"t": "device_sync", "sk": 1})
for rec in lines:
    print(json.dumps(rec, separators=(",", ":")))
