#!/usr/bin/env python3
"""Writes the replay suite's trace fixtures (docs/trace-format.md).

Each pipeline trace is the event sequence a run of the corresponding program
produces: the four producer/consumer pipelines of examples/torch over
PyTorch's caching allocator and over the stream-ordered allocator
(cudaMallocAsync / cudaFreeAsync), plus small traces for one behaviour each.
Run it from this directory to regenerate; the outputs are committed.
"""
import json
import os
import sys

MiB = 1 << 20
PARAM_BYTES = 64 * MiB          # 4096 x 4096 floats
LEGACY = 0                      # the legacy default stream
AG = 0x55D0                     # producer ("all-gather") stream
COMPUTE = 0x7                   # consumer stream of the CUDA pipelines
BLOCK_A = 0x7F0000000000
BLOCK_B = 0x7F0004000000
BLOCK_C = 0x7F0008000000
BLOCK_D = 0x7F000C000000
X_BUF = 0x7F0100000000
RESULTS = 0x7F0200000000

TORCH_PY = "/src/examples/torch/pipelines.py"
CUDA_CU = "/src/examples/cuda/pipelines.cu"


class Trace:
    def __init__(self, program, pid=4242, version=1):
        self.lines = [dict(format="xstream-trace", version=version, pid=pid, program=program)]
        self.names = {}
        self.stacks = {}
        self.next_event = 0x9000

    def name(self, text):
        if text not in self.names:
            self.names[text] = len(self.names) + 1
            self.lines.append(dict(t="name", id=self.names[text], str=text))
        return self.names[text]

    def stack(self, frames):
        key = tuple(frames)
        if key not in self.stacks:
            self.stacks[key] = len(self.stacks) + 1
            self.lines.append(dict(t="stack", id=self.stacks[key],
                                   frames=[dict(fn=f, file=p, line=l) for f, p, l in frames]))
        return self.stacks[key]

    def ev(self, kind, stack=None, **fields):
        rec = dict(t=kind)
        if stack:
            rec["sk"] = self.stack(stack)
        rec.update(fields)
        self.lines.append(rec)

    def new_event(self):
        self.next_event += 1
        return self.next_event

    def use(self, addr, size, stream, access, name, stack, what="kernel"):
        self.ev("use", stack, a=addr, n=size, s=stream, ac=access, w=what, nm=self.name(name))

    def write(self, path):
        with open(path, "w") as f:
            for rec in self.lines:
                f.write(json.dumps(rec, separators=(",", ":")) + "\n")


# --- PyTorch pipelines over the caching allocator -------------------------

def t_frames(*frames):
    return [(fn, TORCH_PY, line) for fn, line in frames]


class TorchPipeline:
    """The events of one pipeline function; `caller` is its frame name."""

    def __init__(self, tr, fn, allocator="caching"):
        self.tr, self.fn, self.allocator = tr, fn, allocator
        self.result_slot = 0

    def all_gather(self, addr, line):
        tr = self.tr
        tr.ev("alloc", t_frames(("all_gather", 30), (self.fn, line)), a=addr, n=PARAM_BYTES, s=AG,
              ak=self.allocator)
        tr.use(addr, PARAM_BYTES, AG, "write", "fill_kernel", t_frames(("all_gather", 30), (self.fn, line)))

    def wait_stream(self, line):
        e = self.tr.new_event()
        self.tr.ev("record", t_frames((self.fn, line)), s=AG, e=e)
        self.tr.ev("wait", t_frames((self.fn, line)), s=LEGACY, e=e)

    def forward(self, params, line):
        tr = self.tr
        out = RESULTS + self.result_slot * 64 * MiB
        self.result_slot += 1
        st = t_frames(("forward", 40), (self.fn, line))
        tr.ev("alloc", st, a=out, n=64 * MiB, s=LEGACY, ak=self.allocator)
        tr.use(params, PARAM_BYTES, LEGACY, "read", "ampere_sgemm", st)
        tr.use(X_BUF, 64 * MiB, LEGACY, "read", "ampere_sgemm", st)
        tr.use(out, 64 * MiB, LEGACY, "write", "ampere_sgemm", st)

    def record_default(self, line):
        e = self.tr.new_event()
        self.tr.ev("record", t_frames((self.fn, line)), s=LEGACY, e=e)
        return e

    def ag_wait(self, e, line):
        self.tr.ev("wait", t_frames((self.fn, line)), s=AG, e=e)

    def free(self, addr, line, deferred=False):
        rec = dict(a=addr, s=AG, fk=self.allocator)
        if deferred:
            rec["d"] = True
        self.tr.ev("free", t_frames((self.fn, line)), **rec)

    def end(self, line):
        tr = self.tr
        tr.ev("device_sync", t_frames((self.fn, line)))
        for i in range(self.result_slot):
            tr.ev("free", t_frames(("main", 130)), a=RESULTS + i * 64 * MiB, s=LEGACY, fk=self.allocator)


def torch_prologue(tr):
    tr.ev("stream_create", t_frames(("main", 110)), s=AG, fl="non_blocking")
    tr.ev("alloc", t_frames(("main", 112)), a=X_BUF, n=64 * MiB, s=LEGACY, ak="caching")
    tr.use(X_BUF, 64 * MiB, LEGACY, "write", "fill_kernel", t_frames(("main", 112)))


def torch_buggy():
    tr = Trace("python3 pipelines.py buggy")
    torch_prologue(tr)
    p = TorchPipeline(tr, "buggy")
    p.all_gather(BLOCK_A, 50)
    for _ in range(2, 5):
        p.wait_stream(54)
        p.forward(BLOCK_A, 55)
        p.free(BLOCK_A, 57)            # del prev_params: matmul still running
        p.all_gather(BLOCK_A, 59)      # the allocator hands block A straight back
    p.wait_stream(61)
    p.forward(BLOCK_A, 62)
    p.free(BLOCK_A, 64)
    p.end(66)
    return tr


def torch_record_stream():
    tr = Trace("python3 pipelines.py record_stream")
    torch_prologue(tr)
    p = TorchPipeline(tr, "record_stream")
    blocks = [BLOCK_A, BLOCK_B, BLOCK_C, BLOCK_D]
    p.all_gather(blocks[0], 140)
    for layer in range(2, 5):
        p.wait_stream(143)
        p.forward(blocks[layer - 2], 144)
        p.free(blocks[layer - 2], 148, deferred=True)   # parked on its events
        p.all_gather(blocks[layer - 1], 150)             # the CPU ran ahead: a fresh block
    p.wait_stream(152)
    p.forward(blocks[3], 153)
    p.free(blocks[3], 156, deferred=True)
    tr.ev("device_sync", t_frames(("record_stream", 158)))
    # The allocator's next event query finds every parked block's events done.
    for b in blocks:
        tr.ev("free_done", t_frames(("all_gather", 30), ("main", 125)), a=b)
    for i in range(p.result_slot):
        tr.ev("free", t_frames(("main", 130)), a=RESULTS + i * 64 * MiB, s=LEGACY, fk="caching")
    return tr


def torch_stall():
    tr = Trace("python3 pipelines.py stall")
    torch_prologue(tr)
    p = TorchPipeline(tr, "stall_producer")
    p.all_gather(BLOCK_A, 80)
    for _ in range(2, 5):
        p.wait_stream(83)
        p.forward(BLOCK_A, 84)
        e = p.record_default(85)
        p.ag_wait(e, 89)
        p.free(BLOCK_A, 90)
        p.all_gather(BLOCK_A, 91)
    p.wait_stream(93)
    p.forward(BLOCK_A, 94)
    e = p.record_default(95)
    p.ag_wait(e, 97)
    p.free(BLOCK_A, 98)
    p.end(100)
    return tr


def torch_keep_ref():
    tr = Trace("python3 pipelines.py keep_ref")
    torch_prologue(tr)
    p = TorchPipeline(tr, "keep_ref")
    prev, spare = BLOCK_A, BLOCK_B
    p.all_gather(prev, 170)
    keepalive = None
    for _ in range(2, 5):
        if keepalive is not None:
            p.ag_wait(keepalive[1], 176)
            p.free(keepalive[0], 177)
        p.wait_stream(180)
        p.forward(prev, 181)
        e = p.record_default(182)
        keepalive = (prev, e)
        nxt = spare
        p.all_gather(nxt, 189)
        spare, prev = prev, nxt
    p.ag_wait(keepalive[1], 193)
    p.free(keepalive[0], 194)
    p.wait_stream(197)
    p.forward(prev, 198)
    e = p.record_default(199)
    p.ag_wait(e, 201)
    p.free(prev, 202)
    p.end(204)
    return tr


# --- The same pipelines over the stream-ordered allocator ------------------

def c_frames(*frames):
    return [(fn, CUDA_CU, line) for fn, line in frames]


class CudaPipeline:
    def __init__(self, tr, fn):
        self.tr, self.fn = tr, fn

    def all_gather(self, addr, line):
        st = c_frames(("all_gather(cudaStream_t, int)", 40), (self.fn, line))
        self.tr.ev("alloc", st, a=addr, n=PARAM_BYTES, s=AG, ak="stream_ordered")
        self.tr.use(addr, PARAM_BYTES, AG, "write", "fill_params", st)

    def wait_stream(self, line):
        e = self.tr.new_event()
        self.tr.ev("record", c_frames((self.fn, line)), s=AG, e=e)
        self.tr.ev("wait", c_frames((self.fn, line)), s=COMPUTE, e=e)

    def forward(self, params, line):
        st = c_frames(("forward(float const*, float const*, float*, cudaStream_t)", 55), (self.fn, line))
        self.tr.use(params, PARAM_BYTES, COMPUTE, "read", "ampere_sgemm", st)
        self.tr.use(X_BUF, 64 * MiB, COMPUTE, "read", "ampere_sgemm", st)

    def record_compute(self, line):
        e = self.tr.new_event()
        self.tr.ev("record", c_frames((self.fn, line)), s=COMPUTE, e=e)
        return e

    def ag_wait(self, e, line):
        self.tr.ev("wait", c_frames((self.fn, line)), s=AG, e=e)

    def free(self, addr, line, stream=AG):
        self.tr.ev("free", c_frames((self.fn, line)), a=addr, s=stream, fk="stream_ordered")

    def end(self, line):
        self.tr.ev("device_sync", c_frames((self.fn, line)))


def cuda_prologue(tr):
    tr.ev("stream_create", c_frames(("main", 200)), s=AG, fl="non_blocking")
    tr.ev("stream_create", c_frames(("main", 201)), s=COMPUTE, fl="non_blocking")
    tr.ev("alloc", c_frames(("main", 203)), a=X_BUF, n=64 * MiB, s=COMPUTE, ak="stream_ordered")
    tr.use(X_BUF, 64 * MiB, COMPUTE, "write", "fill_input", c_frames(("main", 204)))


def cuda_buggy():
    tr = Trace("pipelines buggy", pid=5151)
    cuda_prologue(tr)
    p = CudaPipeline(tr, "buggy(float const*)")
    p.all_gather(BLOCK_A, 70)
    for _ in range(2, 5):
        p.wait_stream(73)
        p.forward(BLOCK_A, 74)
        p.free(BLOCK_A, 76)
        p.all_gather(BLOCK_A, 77)
    p.wait_stream(79)
    p.forward(BLOCK_A, 80)
    p.free(BLOCK_A, 81)
    p.end(83)
    return tr


def cuda_free_on_consumer():
    # The stream-ordered counterpart of record_stream: free where it was used.
    tr = Trace("pipelines free_on_consumer", pid=5152)
    cuda_prologue(tr)
    p = CudaPipeline(tr, "free_on_consumer(float const*)")
    blocks = [BLOCK_A, BLOCK_B, BLOCK_C, BLOCK_D]
    p.all_gather(blocks[0], 90)
    for layer in range(2, 5):
        p.wait_stream(93)
        p.forward(blocks[layer - 2], 94)
        p.free(blocks[layer - 2], 96, stream=COMPUTE)
        p.all_gather(blocks[layer - 1], 97)
    p.wait_stream(99)
    p.forward(blocks[3], 100)
    p.free(blocks[3], 101, stream=COMPUTE)
    p.end(103)
    return tr


def cuda_stall():
    tr = Trace("pipelines stall", pid=5153)
    cuda_prologue(tr)
    p = CudaPipeline(tr, "stall_producer(float const*)")
    p.all_gather(BLOCK_A, 110)
    for _ in range(2, 5):
        p.wait_stream(113)
        p.forward(BLOCK_A, 114)
        e = p.record_compute(115)
        p.ag_wait(e, 116)
        p.free(BLOCK_A, 117)
        p.all_gather(BLOCK_A, 118)
    p.wait_stream(120)
    p.forward(BLOCK_A, 121)
    e = p.record_compute(122)
    p.ag_wait(e, 123)
    p.free(BLOCK_A, 124)
    p.end(126)
    return tr


def cuda_keep_ref():
    tr = Trace("pipelines keep_ref", pid=5154)
    cuda_prologue(tr)
    p = CudaPipeline(tr, "keep_ref(float const*)")
    prev, spare = BLOCK_A, BLOCK_B
    p.all_gather(prev, 130)
    keepalive = None
    for _ in range(2, 5):
        if keepalive is not None:
            p.ag_wait(keepalive[1], 134)
            p.free(keepalive[0], 135)
        p.wait_stream(137)
        p.forward(prev, 138)
        e = p.record_compute(139)
        keepalive = (prev, e)
        nxt = spare
        p.all_gather(nxt, 141)
        spare, prev = prev, nxt
    p.ag_wait(keepalive[1], 144)
    p.free(keepalive[0], 145)
    p.wait_stream(147)
    p.forward(prev, 148)
    e = p.record_compute(149)
    p.ag_wait(e, 150)
    p.free(prev, 151)
    p.end(153)
    return tr


# --- One behaviour each ----------------------------------------------------

SMALL_CU = "/src/examples/cuda/small.cu"


def s(*frames):
    return [(fn, SMALL_CU, line) for fn, line in frames]


def ready_on(tr, producer, consumer, line, stack=None):
    """An event recorded on `producer` and waited for on `consumer`, both at
    `stack` (default: main at `line` of SMALL_CU)."""
    stack = stack or s(("main", line))
    e = tr.new_event()
    tr.ev("record", stack, s=producer, e=e)
    tr.ev("wait", stack, s=consumer, e=e)


def wait_after_free():
    tr = Trace("wait_after_free", pid=6001)
    P, C = 0x1100, 0x2200
    tr.ev("stream_create", s(("main", 10)), s=P, fl="non_blocking")
    tr.ev("stream_create", s(("main", 11)), s=C, fl="non_blocking")
    tr.ev("alloc", s(("main", 13)), a=BLOCK_A, n=MiB, s=P, ak="stream_ordered")
    tr.use(BLOCK_A, MiB, P, "write", "produce", s(("main", 14)))
    ready_on(tr, P, C, 15)
    tr.use(BLOCK_A, MiB, C, "read", "consume", s(("consume_async", 30), ("main", 16)))
    done = tr.new_event()
    tr.ev("record", s(("main", 17)), s=C, e=done)
    tr.ev("free", s(("main", 18)), a=BLOCK_A, s=P, fk="stream_ordered")
    tr.ev("wait", s(("main", 19)), s=P, e=done)      # right wait, wrong place
    tr.ev("device_sync", s(("main", 21)))
    return tr


def legacy_stream(blocking):
    flags = "blocking" if blocking else "non_blocking"
    tr = Trace("legacy_stream " + flags, pid=6002)
    P = 0x3300
    tr.ev("stream_create", s(("main", 40)), s=P, fl=flags)
    tr.ev("alloc", s(("main", 42)), a=BLOCK_A, n=MiB, s=P, ak="stream_ordered")
    tr.use(BLOCK_A, MiB, P, "write", "produce", s(("main", 43)))
    ready_on(tr, P, LEGACY, 44)
    tr.use(BLOCK_A, MiB, LEGACY, "read", "consume", s(("main", 45)))
    # No explicit wait: a blocking stream's next op waits for the legacy
    # default stream's earlier work, a non-blocking stream's does not.
    tr.ev("free", s(("main", 46)), a=BLOCK_A, s=P, fk="stream_ordered")
    tr.ev("device_sync", s(("main", 48)))
    return tr


def view_offset():
    tr = Trace("view_offset", pid=6003)
    P, C = 0x1100, 0x2200
    tr.ev("stream_create", s(("main", 60)), s=P, fl="non_blocking")
    tr.ev("stream_create", s(("main", 61)), s=C, fl="non_blocking")
    tr.ev("alloc", s(("main", 63)), a=BLOCK_A, n=16 * MiB, s=P, ak="caching")
    tr.use(BLOCK_A, 16 * MiB, P, "write", "produce", s(("main", 64)))
    ready_on(tr, P, C, 65)
    # A view: the kernel gets a pointer 1 MiB into the block.
    tr.use(BLOCK_A + MiB, MiB, C, "read", "consume_slice", s(("main", 66)))
    tr.ev("free", s(("main", 67)), a=BLOCK_A, s=P, fk="caching")
    tr.ev("device_sync", s(("main", 69)))
    return tr


def rerecorded_event():
    tr = Trace("rerecorded_event", pid=6004)
    P, C, Q = 0x1100, 0x2200, 0x4400
    for i, st in enumerate((P, C, Q)):
        tr.ev("stream_create", s(("main", 80 + i)), s=st, fl="non_blocking")
    # Buffer A: the event is recorded too early, then re-recorded after the
    # use; the wait sees the latest record, so the free is ordered.
    tr.ev("alloc", s(("main", 85)), a=BLOCK_A, n=MiB, s=P, ak="stream_ordered")
    ready_on(tr, P, C, 86)
    tr.ev("record", s(("main", 87)), s=C, e=0xE1)
    tr.use(BLOCK_A, MiB, C, "read", "consume_a", s(("main", 88)))
    tr.ev("record", s(("main", 89)), s=C, e=0xE1)
    tr.ev("wait", s(("main", 90)), s=P, e=0xE1)
    tr.ev("free", s(("main", 91)), a=BLOCK_A, s=P, fk="stream_ordered")
    # Buffer B: recorded after the use, then re-recorded on another stream
    # before the wait; the wait no longer covers the use.
    tr.ev("alloc", s(("main", 95)), a=BLOCK_B, n=MiB, s=P, ak="stream_ordered")
    ready_on(tr, P, C, 96)
    tr.use(BLOCK_B, MiB, C, "read", "consume_b", s(("main", 97)))
    tr.ev("record", s(("main", 98)), s=C, e=0xE2)
    tr.ev("record", s(("main", 99)), s=Q, e=0xE2)
    tr.ev("wait", s(("main", 100)), s=P, e=0xE2)
    tr.ev("free", s(("main", 101)), a=BLOCK_B, s=P, fk="stream_ordered")
    tr.ev("device_sync", s(("main", 103)))
    return tr


def use_after_free():
    tr = Trace("use_after_free", pid=6005)
    P = 0x1100
    tr.ev("stream_create", s(("main", 110)), s=P, fl="non_blocking")
    tr.ev("alloc", s(("main", 112)), a=BLOCK_A, n=MiB, s=P, ak="stream_ordered")
    tr.use(BLOCK_A, MiB, P, "write", "produce", s(("main", 113)))
    tr.ev("free", s(("main", 114)), a=BLOCK_A, s=P, fk="stream_ordered")
    tr.use(BLOCK_A, MiB, P, "read", "late_reader", s(("late_reader_launch", 150), ("main", 115)))
    tr.ev("device_sync", s(("main", 117)))
    return tr


def use_before_ready():
    tr = Trace("use_before_ready", pid=6006)
    P, C = 0x1100, 0x2200
    tr.ev("stream_create", s(("main", 120)), s=P, fl="non_blocking")
    tr.ev("stream_create", s(("main", 121)), s=C, fl="non_blocking")
    tr.ev("alloc", s(("main", 123)), a=BLOCK_A, n=MiB, s=P, ak="stream_ordered")
    # No wait: C may run before P has made the memory available.
    tr.ev("use", s(("main", 124)), a=BLOCK_A, n=0, s=C, ac="write", w="memset")
    tr.ev("free", s(("main", 125)), a=BLOCK_A, s=C, fk="stream_ordered")
    tr.ev("device_sync", s(("main", 127)))
    return tr


def test_markers():
    """A pytest session under the runtime: a `test` marker names each test
    as it starts, and none after the last. Findings are attributed to the
    test current at the free: test_buggy and its second parameter free the
    block before the producer waits (the same stacks in both), test_late's
    free is judged only in test_next, which reuses the block, test_clean
    stays on one stream, and the session's own teardown has a finding
    outside any test."""
    tr = Trace("python3 -m pytest tests/test_pipe.py", pid=7001)
    tr.lines[0]["version"] = 3
    P, C = AG, 0x2200
    py = "/src/tests/test_pipe.py"

    def st(*frames):
        return [(fn, py, line) for fn, line in frames]

    def test(nodeid):
        tr.ev("test", nm=tr.name(nodeid)) if nodeid else tr.ev("test")

    def unordered_free(block, free_stack):
        tr.ev("alloc", st(("gather", 10)), a=block, n=MiB, s=P, ak="caching")
        tr.use(block, MiB, C, "read", "matmul", st(("consume", 20)))
        tr.ev("free", free_stack, a=block, s=P, fk="caching")

    def reuse(block, stack):
        tr.ev("alloc", stack, a=block, n=MiB, s=P, ak="caching")
        tr.use(block, MiB, P, "write", "fill", stack)

    tr.ev("stream_create", st(("session", 1)), s=C, fl="non_blocking")
    for nodeid in ("tests/test_pipe.py::test_buggy[1]", "tests/test_pipe.py::test_buggy[2]"):
        test(nodeid)
        unordered_free(BLOCK_A, st(("test_buggy", 31)))
        reuse(BLOCK_A, st(("gather", 11), ("test_buggy", 32)))
        tr.ev("device_sync", st(("test_buggy", 33)))
        tr.ev("free", st(("test_buggy", 34)), a=BLOCK_A, s=P, fk="caching")
    test("tests/test_pipe.py::test_late")
    unordered_free(BLOCK_B, st(("test_late", 41)))
    test("tests/test_pipe.py::test_next")
    reuse(BLOCK_B, st(("gather", 11), ("test_next", 51)))
    tr.ev("device_sync", st(("test_next", 52)))
    test("tests/test_pipe.py::test_clean")
    tr.ev("alloc", st(("gather", 10)), a=BLOCK_C, n=MiB, s=P, ak="caching")
    tr.use(BLOCK_C, MiB, P, "read", "matmul", st(("consume", 20)))
    tr.ev("free", st(("test_clean", 61)), a=BLOCK_C, s=P, fk="caching")
    reuse(BLOCK_C, st(("gather", 11), ("test_clean", 62)))
    test(None)
    unordered_free(BLOCK_D, st(("session_teardown", 90)))
    reuse(BLOCK_D, st(("gather", 11), ("session_teardown", 91)))
    return tr


def collective_graph():
    # A collective and a graph-launched kernel; exercises the remaining kinds.
    tr = Trace("collective_graph", pid=6007)
    P, C = 0x1100, 0x2200
    tr.ev("thread_name", None, th=1, nm=tr.name("loader"))
    tr.ev("stream_create", s(("main", 130)), s=P, fl="non_blocking")
    tr.ev("stream_create", s(("main", 131)), s=C, fl="non_blocking")
    tr.ev("alloc", s(("main", 133)), th=1, a=BLOCK_A, n=MiB, s=P, ak="caching")
    tr.ev("use", s(("main", 134)), a=BLOCK_A, n=MiB, s=P, ac="write", w="collective",
          nm=tr.name("ncclAllGather"))
    tr.ev("host_func", s(("main", 135)), s=P)
    ready_on(tr, P, C, 136)
    tr.ev("graph_launch", s(("main", 137)), s=C, g=0x6A, nm=tr.name("step_graph"))
    tr.ev("use", None, a=BLOCK_A, n=MiB, s=C, ac="read", w="kernel", nm=tr.name("graph_gemm"), g=0x6A)
    tr.ev("stream_sync", s(("main", 138)), s=C)
    tr.ev("free", s(("main", 139)), a=BLOCK_A, s=P, fk="caching")
    tr.ev("event_sync", s(("main", 140)), e=0x9999)
    tr.ev("stream_destroy", s(("main", 141)), s=C)
    return tr


def two_allocations():
    # The use must be found among several live blocks, whichever order they
    # were allocated in.
    tr = Trace("two_allocations", pid=6008)
    P = 0x1100
    tr.ev("stream_create", s(("main", 150)), s=P, fl="non_blocking")
    tr.ev("alloc", s(("main", 151)), a=BLOCK_B, n=MiB, s=P, ak="caching")
    tr.ev("alloc", s(("main", 152)), a=BLOCK_A, n=MiB, s=P, ak="caching")
    tr.ev("alloc", s(("main", 153)), a=BLOCK_C, n=MiB, s=P, ak="caching")
    tr.use(BLOCK_A, MiB, LEGACY, "read", "consume", s(("main", 154)))
    tr.ev("free", s(("main", 155)), a=BLOCK_A, s=P, fk="caching")
    tr.ev("device_sync", s(("main", 157)))
    return tr



# --- Reuse: the memory's next use decides (the default rule) ----------------
#
# FSDP2's shape: a gradient allocated on the reduce-scatter stream RS is
# read by the optimizer on the compute stream and freed (zero_grad) before RS
# is ordered after compute; RS waits for compute only in the next backward.

FSDP_PY = "/src/train_fsdp.py"
RS, COMPUTE_S, PACK = 0x3300, 0, 0x4400
GRAD = 0x7F1000000000


def f(*frames):
    return [(fn, FSDP_PY, line) for fn, line in frames]


def fsdp2_step(tr, first_use_before_wait=False, alloc_before_wait=False):
    tr.ev("stream_create", f(("lazy_init", 5)), s=RS, fl="non_blocking")
    tr.ev("alloc", f(("foreach_reduce", 20)), a=GRAD, n=MiB, s=RS, ak="caching")
    tr.use(GRAD, MiB, RS, "write", "reduce_scatter", f(("foreach_reduce", 22)), what="collective")
    e = tr.new_event()
    tr.ev("record", f(("post_backward", 30)), s=RS, e=e)
    tr.ev("wait", f(("post_backward", 31)), s=COMPUTE_S, e=e)
    tr.use(GRAD, MiB, COMPUTE_S, "read", "adamw_kernel", f(("step", 40)))
    tr.ev("free", f(("zero_grad", 50)), a=GRAD, s=RS, fk="caching")

    def realloc_and_use():
        if alloc_before_wait:
            return
        tr.ev("alloc", f(("foreach_reduce", 20)), a=GRAD, n=MiB, s=RS, ak="caching")

    def first_use():
        tr.use(GRAD, MiB, RS, "write", "reduce_scatter", f(("foreach_reduce", 22)), what="collective")

    if alloc_before_wait:
        tr.ev("alloc", f(("foreach_reduce", 20)), a=GRAD, n=MiB, s=RS, ak="caching")
    if first_use_before_wait:
        realloc_and_use()
        first_use()
    late = tr.new_event()
    tr.ev("record", f(("pre_backward", 60)), s=COMPUTE_S, e=late)
    tr.ev("wait", f(("pre_backward", 61)), s=RS, e=late)  # the late wait
    if not first_use_before_wait:
        realloc_and_use()
        first_use()
    tr.ev("device_sync", f(("train", 70)))


def fsdp2_latent():
    tr = Trace("python3 train_fsdp.py", pid=7001)
    fsdp2_step(tr)
    return tr


def fsdp2_reuse_before_wait():
    tr = Trace("python3 train_fsdp.py", pid=7002)
    fsdp2_step(tr, first_use_before_wait=True)
    return tr


def fsdp2_alloc_before_wait():
    tr = Trace("python3 train_fsdp.py", pid=7003)
    fsdp2_step(tr, alloc_before_wait=True)
    return tr


# A same-stream free whose block is allocated again on that stream and first
# written under a pack stream that never waited for it ("allocate the
# staging buffer on its first-use stream").
def staging_reuse(pack_waits):
    tr = Trace("python3 offload.py", pid=7004)
    OFF_PY = "/src/offload.py"
    st = lambda *fr: [(fn, OFF_PY, line) for fn, line in fr]
    ACT = 0x7F2000000000
    tr.ev("stream_create", st(("main", 3)), s=PACK, fl="non_blocking")
    tr.ev("alloc", st(("layer", 10)), a=ACT, n=4 * MiB, s=COMPUTE_S, ak="caching")
    tr.use(ACT, 4 * MiB, COMPUTE_S, "read", "gemm", st(("layer", 12)))
    tr.ev("free", st(("layer", 13)), a=ACT, s=COMPUTE_S, fk="caching")  # del act
    tr.ev("alloc", st(("offload", 20)), a=ACT, n=4 * MiB, s=COMPUTE_S, ak="caching")
    if pack_waits:
        e = tr.new_event()
        tr.ev("record", st(("offload", 21)), s=COMPUTE_S, e=e)
        tr.ev("wait", st(("offload", 21)), s=PACK, e=e)
    tr.use(ACT, 4 * MiB, PACK, "write", "memcpy HtoD", st(("offload", 23)), what="memcpy")
    tr.ev("device_sync", st(("main", 30)))
    return tr


# cudaFree after a use on another stream: it synchronizes the device first.
def cuda_free_after_cross_stream_use():
    tr = Trace("sync_free", pid=7005)
    P, C = 0x1100, 0x2200
    tr.ev("stream_create", s(("main", 1)), s=P, fl="non_blocking")
    tr.ev("stream_create", s(("main", 2)), s=C, fl="non_blocking")
    tr.ev("alloc", s(("main", 3)), a=0x7F0000000000, n=MiB, s=P, ak="sync")
    tr.use(0x7F0000000000, MiB, C, "read", "consume", s(("main", 4)))
    tr.ev("free", s(("main", 5)), a=0x7F0000000000, s=P, fk="sync")
    tr.ev("alloc", s(("main", 6)), a=0x7F0000000000, n=MiB, s=P, ak="sync")
    tr.use(0x7F0000000000, MiB, P, "write", "produce", s(("main", 7)))
    return tr


# cudaFreeAsync(p, P) after an unordered read on C; the pool hands the memory
# to an allocation on a third stream X (after X waited for the free).
def pool_reuse_third_stream():
    tr = Trace("pool_reuse", pid=7006)
    P, C, X = 0x1100, 0x2200, 0x3300
    for i, st_ in enumerate((P, C, X)):
        tr.ev("stream_create", s(("main", 1 + i)), s=st_, fl="non_blocking")
    tr.ev("alloc", s(("main", 10)), a=0x7F0000000000, n=MiB, s=P, ak="stream_ordered")
    ready_on(tr, P, C, 11)
    tr.use(0x7F0000000000, MiB, C, "read", "consume", s(("consume_async", 30), ("main", 12)))
    tr.ev("free", s(("main", 13)), a=0x7F0000000000, s=P, fk="stream_ordered")
    ready_on(tr, P, X, 14)
    tr.ev("alloc", s(("main", 15)), a=0x7F0000000000, n=MiB, s=X, ak="stream_ordered")
    tr.use(0x7F0000000000, MiB, X, "write", "produce", s(("main", 16)))
    tr.ev("device_sync", s(("main", 17)))
    return tr


# The owner P waits for C's read before cudaFreeAsync; the pool then hands
# the memory to an allocation on X (another host thread's stream in a real
# program), with no event the trace shows: the driver orders X after the
# free (event dependency, opportunistic reuse or an inserted dependency), so
# the read is ordered before X's write.
def pool_reuse_ordered_free():
    tr = Trace("pool_reuse_ordered", pid=7012)
    P, C, X = 0x1100, 0x2200, 0x3300
    for i, st_ in enumerate((P, C, X)):
        tr.ev("stream_create", s(("main", 1 + i)), s=st_, fl="non_blocking")
    tr.ev("alloc", s(("main", 10)), a=0x7F0000000000, n=MiB, s=P, ak="stream_ordered")
    ready_on(tr, P, C, 11)
    tr.use(0x7F0000000000, MiB, C, "read", "consume", s(("consume_async", 30), ("main", 12)))
    ready_on(tr, C, P, 13)
    tr.ev("free", s(("main", 14)), a=0x7F0000000000, s=P, fk="stream_ordered")
    tr.ev("alloc", s(("worker", 15)), a=0x7F0000000000, n=MiB, s=X, ak="stream_ordered")
    tr.use(0x7F0000000000, MiB, X, "write", "produce", s(("worker", 16)))
    tr.ev("device_sync", s(("main", 17)))
    return tr


# cudaLaunchHostFunc on C after the read sets a flag; the host waits for the
# flag, then frees on P. The runtime saw the host function return before the
# free. Without the host function, the same free is unordered.
def host_func_flag(with_host_func):
    tr = Trace("host_func_flag", pid=7007)
    tr.lines[0]["version"] = 2
    P, C = 0x1100, 0x2200
    tr.ev("stream_create", s(("main", 1)), s=P, fl="non_blocking")
    tr.ev("stream_create", s(("main", 2)), s=C, fl="non_blocking")
    tr.ev("alloc", s(("main", 3)), a=0x7F0000000000, n=MiB, s=P, ak="stream_ordered")
    ready_on(tr, P, C, 4)
    tr.use(0x7F0000000000, MiB, C, "read", "consume", s(("main", 5)))
    if with_host_func:
        tr.ev("host_func", s(("main", 6)), s=C, e=31)
        tr.ev("host_func_run", s=C, e=31, th=1)
        tr.ev("host_func_done", s=C, e=31, th=1)
    tr.ev("free", s(("main", 8)), a=0x7F0000000000, s=P, fk="stream_ordered")
    tr.ev("alloc", s(("main", 9)), a=0x7F0000000000, n=MiB, s=P, ak="stream_ordered")
    tr.use(0x7F0000000000, MiB, P, "write", "produce", s(("main", 10)))
    tr.ev("device_sync", s(("main", 11)))
    return tr


# A C++ program's free reached through the statically linked CUDA runtime:
# the first frames are the runtime's, and SUMMARY names the user's frame.
def static_runtime_frames():
    tr = Trace("static_runtime", pid=7008)
    P, C = 0x1100, 0x2200
    rt = lambda fn: (fn, "", 0)
    tr.ev("stream_create", s(("main", 1)), s=P, fl="non_blocking")
    tr.ev("stream_create", s(("main", 2)), s=C, fl="non_blocking")
    tr.ev("alloc", s(("main", 3)), a=0x7F0000000000, n=MiB, s=P, ak="stream_ordered")
    ready_on(tr, P, C, 4)
    tr.ev("use", [("__device_stub__Z7consumePf(float*)", "/tmp/tmpxft_0001_small.cudafe1.stub.c", 1),
                  ("launch_consume", SMALL_CU, 40), ("main", SMALL_CU, 5)],
          a=0x7F0000000000, n=MiB, s=C, ac="read", w="kernel", nm=tr.name("consume"))
    tr.ev("free", [rt("cudaFreeAsync"), rt("__cudart1234"), ("release", SMALL_CU, 50), ("main", SMALL_CU, 6)],
          a=0x7F0000000000, s=P, fk="stream_ordered")
    tr.ev("alloc", s(("main", 7)), a=0x7F0000000000, n=MiB, s=P, ak="stream_ordered")
    tr.use(0x7F0000000000, MiB, P, "write", "produce", s(("main", 8)))
    return tr


# --- Live memory: reads before a copy lands, writes over a pending read ------

LIVE_PY = "/src/offload_live.py"


def lv(*frames):
    return [(fn, LIVE_PY, line) for fn, line in frames]


# Weights uploaded with non_blocking copies under a transfer stream into
# tensors allocated there, used on the default stream with or without a
# wait_stream first.
def upload_before_use(consumer_waits):
    tr = Trace("python3 offload_live.py upload", pid=7101)
    XFER = 0x5500
    W = 0x7F3000000000
    tr.ev("stream_create", lv(("main", 2)), s=XFER, fl="non_blocking")
    tr.ev("alloc", lv(("upload", 10)), a=W, n=8 * MiB, s=XFER, ak="caching")
    tr.use(W, 8 * MiB, XFER, "write", "memcpy HtoD", lv(("upload", 11)), what="memcpy")
    if consumer_waits:
        e = tr.new_event()
        tr.ev("record", lv(("forward", 19)), s=XFER, e=e)
        tr.ev("wait", lv(("forward", 19)), s=LEGACY, e=e)
    tr.use(W, 0, LEGACY, "read", "gemm", lv(("forward", 20)))
    tr.ev("device_sync", lv(("main", 30)))
    return tr


# A hand-made pool: fixed slots in one preallocated tensor. Compute reads
# slot 1 through a pointer to it; the next request's data is copied into a
# slot on a load stream, waiting for compute's event or not.
def pool_slot_write(load_waits, slot):
    tr = Trace("python3 offload_live.py pool", pid=7102)
    LOAD = 0x6600
    POOL = 0x7F4000000000
    SLOT = MiB
    tr.ev("stream_create", lv(("main", 2)), s=LOAD, fl="non_blocking")
    tr.ev("alloc", lv(("make_pool", 5)), a=POOL, n=4 * SLOT, s=LEGACY, ak="caching")
    tr.use(POOL, 4 * SLOT, LEGACY, "write", "memset", lv(("make_pool", 6)), what="memset")
    e0 = tr.new_event()
    tr.ev("record", lv(("make_pool", 7)), s=LEGACY, e=e0)
    tr.ev("wait", lv(("make_pool", 7)), s=LOAD, e=e0)
    tr.use(POOL + 1 * SLOT, 0, LEGACY, "read", "attention", lv(("decode", 40)))
    if load_waits:
        e = tr.new_event()
        tr.ev("record", lv(("decode", 41)), s=LEGACY, e=e)
        tr.ev("wait", lv(("load_next", 50)), s=LOAD, e=e)
    tr.use(POOL + slot * SLOT, SLOT, LOAD, "write", "memcpy HtoD", lv(("load_next", 52)), what="memcpy")
    tr.ev("device_sync", lv(("main", 60)))
    return tr


# Two streams read the same weights with nothing ordering them: no finding.
def two_readers():
    tr = Trace("python3 offload_live.py readers", pid=7103)
    S1, S2 = 0x7700, 0x7800
    W = 0x7F5000000000
    for i, st_ in enumerate((S1, S2)):
        tr.ev("stream_create", lv(("main", 2 + i)), s=st_, fl="non_blocking")
    tr.ev("alloc", lv(("load", 5)), a=W, n=MiB, s=LEGACY, ak="caching")
    tr.use(W, MiB, LEGACY, "write", "memcpy HtoD", lv(("load", 6)), what="memcpy")
    for st_ in (S1, S2):
        e = tr.new_event()
        tr.ev("record", lv(("load", 7)), s=LEGACY, e=e)
        tr.ev("wait", lv(("load", 7)), s=st_, e=e)
    tr.use(W, MiB, S1, "read", "memcpy DtoD", lv(("branch_a", 10)), what="memcpy")
    tr.use(W, 0, S2, "read", "gemm", lv(("branch_b", 11)))
    tr.use(W, MiB, S2, "read", "memcpy DtoD", lv(("branch_b", 12)), what="memcpy")
    tr.ev("device_sync", lv(("main", 20)))
    return tr


# An in-place operator on a side stream (x.add_(1) under
# torch.cuda.stream(side)) while the default stream reads x: the operator's
# write, from its schema, is a known write (trace version 3). The side
# stream waited for x's creation; the default stream reads x before (a
# write after read at the operator) and after it (a use before ready), or
# waits for the side stream before reading it (the twin).
def ip(*frames):
    return [(fn, "/src/inplace_side.py", line) for fn, line in frames]


def operator_write(consumer_waits):
    lv = ip
    tr = Trace("python3 inplace_side.py", pid=7104, version=3)
    SIDE = 0x7900
    X = 0x7F6000000000
    tr.ev("stream_create", lv(("main", 2)), s=SIDE, fl="non_blocking")
    tr.ev("alloc", lv(("main", 4)), a=X, n=MiB, s=LEGACY, ak="caching")
    tr.use(X, 0, LEGACY, "unknown", "fill_kernel", lv(("main", 4)))
    tr.use(X, MiB, LEGACY, "write", "aten::fill_", lv(("main", 4)), what="op")
    e = tr.new_event()
    tr.ev("record", lv(("main", 5)), s=LEGACY, e=e)
    tr.ev("wait", lv(("main", 5)), s=SIDE, e=e)
    if not consumer_waits:
        tr.use(X, 0, LEGACY, "read", "reduce(float const*, float*, int)", lv(("main", 6)))
    tr.use(X, 0, SIDE, "unknown", "add_kernel", lv(("main", 8)))
    tr.use(X, MiB, SIDE, "write", "aten::add_", lv(("main", 8)), what="op")
    if consumer_waits:
        e = tr.new_event()
        tr.ev("record", lv(("main", 9)), s=SIDE, e=e)
        tr.ev("wait", lv(("main", 9)), s=LEGACY, e=e)
    tr.use(X, 0, LEGACY, "read", "reduce(float const*, float*, int)", lv(("main", 10)))
    tr.ev("device_sync", lv(("main", 12)))
    return tr


# --- An offloaded per-layer cache (examples/torch/offload_cache.py) ---------

CACHE_PY = "/src/offload_cache.py"


def oc(*frames):
    return [(fn, CACHE_PY, line) for fn, line in frames]


# Two layers' caches kept in pinned host memory, prefetched one layer ahead
# on a side stream into caching blocks of that stream, read and dropped on
# the default stream (the cat that appends the step's row), and copied back
# to the host on the default stream. The second prefetch is allocated in
# the block the first turn dropped and copies from the host buffer the
# first turn's offload wrote. With prefetch_waits the side stream waits
# for the default stream before each prefetch.
def offloaded_cache(prefetch_waits):
    tr = Trace("python3 offload_cache.py %s" % ("waits" if prefetch_waits else "bug"), pid=7201)
    tr.lines[0]["version"] = 4
    PF = 0x5A00
    HOST = 0x7F5000000000          # one pinned segment: every host copy lives in it
    ROWS = 256 * 1024
    blocks = [0x7F6000000000, 0x7F6000100000]
    tr.ev("stream_create", oc(("main", 90)), s=PF, fl="non_blocking")
    tr.ev("alloc", oc(("OffloadedCache.__init__", 48), ("main", 90)), a=HOST, n=4 * MiB, s=LEGACY, ak="pinned")
    host = [HOST, HOST + ROWS]      # each layer's cache, filled by the host
    free_host = HOST + 2 * ROWS

    def prefetch(layer, block, caller):
        frames = oc(("OffloadedCache.prefetch", 54), caller)
        tr.ev("alloc", frames, a=block, n=ROWS, s=PF, ak="caching")
        tr.use(host[layer], ROWS, PF, "read", "memcpy HtoD", frames, what="memcpy")
        tr.use(block, ROWS, PF, "write", "memcpy HtoD", frames, what="memcpy")

    prefetch(0, blocks[0], ("main", 100))
    device = {0: blocks[0]}
    for layer, next_block in ((0, blocks[1]), (1, blocks[0])):
        ready_on(tr, PF, LEGACY, None, oc(("OffloadedCache.turn", 58)))
        if prefetch_waits:
            ready_on(tr, LEGACY, PF, None, oc(("OffloadedCache.turn", 60)))
        nxt = (layer + 1) % 2
        prefetch(nxt, next_block, ("OffloadedCache.turn", 61))
        device[nxt] = next_block
        grown = 0x7F6100000000 + layer * 2 * ROWS
        tr.use(device[layer], ROWS, LEGACY, "read", "attend", oc(("attend", 40), ("OffloadedCache.turn", 62)))
        tr.ev("alloc", oc(("OffloadedCache.turn", 63)), a=grown, n=ROWS + 4096, s=LEGACY, ak="caching")
        tr.use(device[layer], ROWS, LEGACY, "read", "cat", oc(("OffloadedCache.turn", 63)))
        tr.use(grown, ROWS + 4096, LEGACY, "write", "cat", oc(("OffloadedCache.turn", 63)))
        tr.ev("free", oc(("OffloadedCache.turn", 63)), a=device.pop(layer), s=PF, fk="caching")
        host[layer] = free_host
        free_host += ROWS + 4096
        tr.use(grown, ROWS + 4096, LEGACY, "read", "memcpy DtoH", oc(("OffloadedCache.turn", 64)), what="memcpy")
        tr.use(host[layer], ROWS + 4096, LEGACY, "write", "memcpy DtoH", oc(("OffloadedCache.turn", 64)),
               what="memcpy")
        tr.ev("free", oc(("OffloadedCache.turn", 64)), a=grown, s=LEGACY, fk="caching")
    tr.ev("device_sync", oc(("main", 105)))
    return tr


GROUP_PY = "/src/diffusers/hooks/group_offloading.py"
BLOCKS_PY = "/src/diffusers_group_offload.py"


def go(*frames):
    """Frames of diffusers' group offloading (name, line), then the example's."""
    return [(fn, GROUP_PY, line) for fn, line in frames] + \
        [("Stack.forward", BLOCKS_PY, 62), ("main", BLOCKS_PY, 105)]


# diffusers' group offloading with a transfer stream (examples/torch/real/
# diffusers_group_offload.py, block level, record_stream=False), three blocks
# in steady state: each block's weights live in one pinned segment and are
# copied into a caching block of the transfer stream one block ahead, read
# by the block's GEMM on the default stream and dropped after it. diffusers
# synchronizes the transfer stream at each onload (which orders the next
# block's GEMM after its weights' copy, made one block earlier), the
# transfer stream again before the last block, and the default stream
# before each drop. `drop` takes one of the two out: "offload" (the default
# stream's synchronization before the drops: the third block's weights are
# allocated in the first block's block while its GEMM may still read it) or
# "onload" (the transfer stream's at each onload: the first two blocks' GEMMs
# read weights whose copies nothing orders before them).
def group_offload(drop=None):
    tr = Trace("python3 diffusers_group_offload.py" + (" (%s synchronization dropped)" % drop if drop else ""),
               pid=7301)
    tr.lines[0]["version"] = 4
    T = 0x5B00
    HOST = 0x7F5200000000
    W = 8 * MiB
    blocks = [0x7F6200000000, 0x7F6200800000]
    tr.ev("stream_create", go(("apply_group_offloading", 689)), s=T, fl="non_blocking")
    tr.ev("alloc", go(("ModuleGroup._init_cpu_param_dict", 190)), a=HOST, n=4 * W, s=LEGACY, ak="pinned")

    def onload(group, block, caller):
        if drop != "onload":
            tr.ev("stream_sync", go(("ModuleGroup._onload_from_memory", 279), caller), s=T)
        frames = go(("ModuleGroup._transfer_tensor_to_device", 210),
                    ("ModuleGroup._process_tensors_from_modules", 224),
                    ("ModuleGroup._onload_from_memory", 287), caller)
        tr.ev("alloc", frames, a=block, n=W, s=T, ak="caching")
        tr.use(HOST + group * W, W, T, "read", "memcpy HtoD", frames, what="memcpy")
        tr.use(block, W, T, "write", "memcpy HtoD", frames, what="memcpy")

    where = {0: blocks[0]}
    onload(0, blocks[0], ("GroupOffloadingHook.pre_forward", 417))   # the first group, by the unmatched one
    for k in range(3):
        if k + 1 < 3:
            nxt = blocks[(k + 1) % 2]
            onload(k + 1, nxt, ("GroupOffloadingHook.pre_forward", 417))
            where[k + 1] = nxt
        else:
            tr.ev("stream_sync", go(("GroupOffloadingHook.pre_forward", 428)), s=T)
        gemm = [("Block.forward", BLOCKS_PY, 50)] + go(("ModelHook.new_forward", 189))
        tr.use(where[k], W, LEGACY, "read", "cublasLtMatmul", gemm, what="kernel")
        if drop != "offload":
            tr.ev("stream_sync", go(("ModuleGroup._offload_to_memory", 319),
                                    ("GroupOffloadingHook.post_forward", 450)), s=LEGACY)
        tr.ev("free", go(("ModuleGroup._offload_to_memory", 326), ("GroupOffloadingHook.post_forward", 450)),
              a=where.pop(k), s=T, fk="caching")
    tr.ev("device_sync", [("main", BLOCKS_PY, 106)])
    return tr


TRACES = {
    "group_offload.jsonl": group_offload,
    "group_offload_offload_race.jsonl": lambda: group_offload(drop="offload"),
    "group_offload_onload_race.jsonl": lambda: group_offload(drop="onload"),
    "offloaded_cache_race.jsonl": lambda: offloaded_cache(prefetch_waits=False),
    "offloaded_cache_waits.jsonl": lambda: offloaded_cache(prefetch_waits=True),
    "operator_write_race.jsonl": lambda: operator_write(consumer_waits=False),
    "operator_write_waits.jsonl": lambda: operator_write(consumer_waits=True),
    "live_upload_race.jsonl": lambda: upload_before_use(consumer_waits=False),
    "live_upload_waits.jsonl": lambda: upload_before_use(consumer_waits=True),
    "live_pool_race.jsonl": lambda: pool_slot_write(load_waits=False, slot=1),
    "live_pool_waits.jsonl": lambda: pool_slot_write(load_waits=True, slot=1),
    "live_pool_other_slot.jsonl": lambda: pool_slot_write(load_waits=False, slot=2),
    "live_two_readers.jsonl": two_readers,
    "reuse_fsdp2_latent.jsonl": fsdp2_latent,
    "reuse_fsdp2_before_wait.jsonl": fsdp2_reuse_before_wait,
    "reuse_fsdp2_alloc_before_wait.jsonl": fsdp2_alloc_before_wait,
    "reuse_staging_race.jsonl": lambda: staging_reuse(pack_waits=False),
    "reuse_staging_waits.jsonl": lambda: staging_reuse(pack_waits=True),
    "reuse_sync_free.jsonl": cuda_free_after_cross_stream_use,
    "reuse_pool_third_stream.jsonl": pool_reuse_third_stream,
    "reuse_pool_ordered_free.jsonl": pool_reuse_ordered_free,
    "host_func_flag.jsonl": lambda: host_func_flag(True),
    "host_func_missing.jsonl": lambda: host_func_flag(False),
    "static_runtime_frames.jsonl": static_runtime_frames,
    "torch_buggy.jsonl": torch_buggy,
    "torch_record_stream.jsonl": torch_record_stream,
    "torch_stall.jsonl": torch_stall,
    "torch_keep_ref.jsonl": torch_keep_ref,
    "async_buggy.jsonl": cuda_buggy,
    "async_free_on_consumer.jsonl": cuda_free_on_consumer,
    "async_stall.jsonl": cuda_stall,
    "async_keep_ref.jsonl": cuda_keep_ref,
    "wait_after_free.jsonl": wait_after_free,
    "legacy_blocking.jsonl": lambda: legacy_stream(True),
    "legacy_non_blocking.jsonl": lambda: legacy_stream(False),
    "view_offset.jsonl": view_offset,
    "rerecorded_event.jsonl": rerecorded_event,
    "use_after_free.jsonl": use_after_free,
    "use_before_ready.jsonl": use_before_ready,
    "collective_graph.jsonl": collective_graph,
    "test_markers.jsonl": test_markers,
    "two_allocations.jsonl": two_allocations,
}

HEADER = '{"format":"xstream-trace","version":1,"pid":1,"program":"bad"}\n'
MALFORMED = {
    "empty.jsonl": b"",
    "blank.jsonl": b"\n\n",
    "not_a_trace.jsonl": b'{"hello":"world"}\n',
    "header_not_object.jsonl": b'[1,2,3]\n',
    "bad_version.jsonl": b'{"format":"xstream-trace","version":7,"pid":1}\n',
    "v4_kind_in_v3.jsonl": (b'{"format":"xstream-trace","version":3,"pid":1}\n'
                            b'{"t":"alloc","a":4096,"n":64,"s":0,"ak":"pinned"}\n'),
    "v4_field_in_v3.jsonl": (b'{"format":"xstream-trace","version":3,"pid":1}\n'
                             b'{"t":"use","a":4096,"n":64,"s":0,"ac":"write","w":"memcpy","sy":true}\n'),
    "v2_kind_in_v1.jsonl": b'{"format":"xstream-trace","version":1,"pid":1}\n{"t":"thread_start","e":5}\n',
    "v3_kind_in_v2.jsonl": (b'{"format":"xstream-trace","version":2,"pid":1}\n'
                            b'{"t":"name","id":1,"str":"t.py::test_x"}\n{"t":"test","nm":1}\n'),
    "version_type.jsonl": b'{"format":"xstream-trace","version":"1","pid":1}\n',
    "missing_pid.jsonl": b'{"format":"xstream-trace","version":1}\n',
    "truncated.jsonl": (HEADER + '{"t":"stream_create","s":1,"fl":"blocking"}\n{"t":"alloc","a":4096,"n":').encode(),
    "cut_line.jsonl": (HEADER + '{"t":"alloc","a":4096,"n":\n{"t":"device_sync"}\n').encode(),
    "bad_json.jsonl": (HEADER + '{"t":"alloc",,}\n').encode(),
    "wrong_type.jsonl": (HEADER + '{"t":"alloc","a":"0x1000","n":16,"s":1,"ak":"caching"}\n').encode(),
    "negative.jsonl": (HEADER + '{"t":"alloc","a":4096,"n":-16,"s":1,"ak":"caching"}\n').encode(),
    "missing_field.jsonl": (HEADER + '{"t":"alloc","a":4096,"s":1,"ak":"caching"}\n').encode(),
    "no_type.jsonl": (HEADER + '{"a":4096}\n').encode(),
    "unknown_kind.jsonl": (HEADER + '{"t":"teleport","s":1}\n').encode(),
    "bad_enum.jsonl": (HEADER + '{"t":"alloc","a":4096,"n":16,"s":1,"ak":"bump"}\n').encode(),
    "binary.jsonl": HEADER.encode() + b'\x00\x01\xff\xfe\x7fELF\x02\x01\x01\n',
    "invalid_utf8.jsonl": HEADER.encode() + b'{"t":"name","id":1,"str":"\xc3\x28"}\n',
    "absurd_size.jsonl": (HEADER + '{"t":"alloc","a":4096,"n":1152921504606846976,"s":1,"ak":"caching"}\n').encode(),
    "range_overflow.jsonl": (HEADER + '{"t":"use","a":18446744073709551600,"n":64,"s":1,"ac":"read","w":"kernel"}\n').encode(),
    "huge_number.jsonl": (HEADER + '{"t":"alloc","a":99999999999999999999999,"n":16,"s":1,"ak":"caching"}\n').encode(),
    "undefined_name.jsonl": (HEADER + '{"t":"use","a":4096,"n":16,"s":1,"ac":"read","w":"kernel","nm":7}\n').encode(),
    "undefined_stack.jsonl": (HEADER + '{"t":"device_sync","sk":9}\n{"t":"device_sync"}\n').encode(),
    "stack_twice.jsonl": (HEADER + '{"t":"stack","id":1,"frames":[]}\n{"t":"stack","id":1,"frames":[]}\n').encode(),
    "bad_frame.jsonl": (HEADER + '{"t":"stack","id":1,"frames":[{"fn":"f","line":"ten"}]}\n').encode(),
    "frame_not_object.jsonl": (HEADER + '{"t":"stack","id":1,"frames":[17]}\n').encode(),
    "record_not_object.jsonl": (HEADER + '"alloc"\n').encode(),
    "trailing.jsonl": (HEADER + '{"t":"device_sync"} {"t":"device_sync"}\n').encode(),
    "thread_range.jsonl": (HEADER + '{"t":"device_sync","th":4294967296}\n').encode(),
}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for name, make in TRACES.items():
        make().write(os.path.join(here, name))
    os.makedirs(os.path.join(here, "malformed"), exist_ok=True)
    for name, data in MALFORMED.items():
        with open(os.path.join(here, "malformed", name), "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
