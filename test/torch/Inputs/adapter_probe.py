"""Drives libxstream_torch.so through a stand-in host API (no runtime).

Usage: adapter_probe.py ADAPTER.so

Prints one line per event the adapter reports, with the innermost frame of
its stack, so a test can check the caching allocator mapping and the Python
lines on their own. Lines tagged "# probe:" are referred to by the test.
"""
import ctypes
import os
import sys

# Line by line: a crash must not take the lines before it along.
sys.stdout.reconfigure(line_buffering=True)

import torch


class Frame(ctypes.Structure):
    _fields_ = [("function", ctypes.c_char_p), ("file", ctypes.c_char_p), ("line", ctypes.c_uint32)]


class DeferredStack(ctypes.Structure):
    _fields_ = [("context", ctypes.c_void_p), ("resolve", ctypes.c_void_p),
                ("release", ctypes.c_void_p)]


U64, U32, INT = ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int
INTERN = ctypes.CFUNCTYPE(U32, ctypes.POINTER(Frame), ctypes.c_size_t)
DEFER = ctypes.CFUNCTYPE(U32, DeferredStack)
ALLOC = ctypes.CFUNCTYPE(None, U64, U64, U64, INT, U32)
FREE = ctypes.CFUNCTYPE(None, U64, U64, INT, INT, U32)
FREE_COMPLETED = ctypes.CFUNCTYPE(None, U64, U32)
USE = ctypes.CFUNCTYPE(None, U64, U64, U64, INT, ctypes.c_char_p, U32)
NOTICE = ctypes.CFUNCTYPE(None, ctypes.c_char_p)
COLLECTIVE = ctypes.CFUNCTYPE(None, U64, U64, U64, INT, ctypes.c_char_p, U32)
HOOK = ctypes.CFUNCTYPE(U32)
SET_HOOK = ctypes.CFUNCTYPE(None, HOOK)


class OperatorWrite(ctypes.Structure):
    _fields_ = [("addr", U64), ("size", U64)]


WANTED = ctypes.CFUNCTYPE(INT)
MARK = ctypes.CFUNCTYPE(U64)
SINCE = ctypes.CFUNCTYPE(INT, U64, U64)
OPERATOR_WRITES = ctypes.CFUNCTYPE(None, ctypes.c_char_p, U64, U64, ctypes.POINTER(OperatorWrite),
                                   ctypes.c_size_t)


class HostApi(ctypes.Structure):
    # Mirrors xsc_host_api in runtime/include/xstream_check/host_api.h.
    _fields_ = [("version", U32), ("intern_frames", INTERN), ("intern_deferred", DEFER),
                ("alloc", ALLOC), ("free", FREE), ("free_completed", FREE_COMPLETED),
                ("use", USE), ("notice", NOTICE), ("collective", COLLECTIVE),
                ("set_launch_stack_hook", SET_HOOK), ("operator_access_wanted", WANTED),
                ("enqueue_mark", MARK), ("enqueued_since", SINCE),
                ("operator_writes", OPERATOR_WRITES)]


stacks = [None]
hooks = []
# Only blocks this probe made are printed, by tensor name.
names = {}
log = []


def top(stack):
    if stack == 0 or stack >= len(stacks):
        return "host"
    fn, path, line = stacks[stack][0]
    return f"{fn} {path.rsplit('/', 1)[-1]}:{line}"


def intern(frames, n):
    stacks.append([(frames[i].function.decode(), frames[i].file.decode(), frames[i].line)
                   for i in range(n)])
    return len(stacks) - 1


def on_alloc(addr, size, stream, kind, stack):
    log.append(("alloc", addr, f"size={size} stream={stream:#x} kind={kind} at {top(stack)}"))


def on_free(addr, stream, kind, deferred, stack):
    log.append(("free", addr, f"stream={stream:#x} kind={kind} deferred={deferred} at {top(stack)}"))


def on_free_completed(addr, stack):
    log.append(("free_completed", addr, ""))


# The operator writes the adapter reports. This stand-in says work was
# enqueued on every stream, so what is left out here is left out by the
# adapter's own reading of the schema.
operator_log = []


def on_operator_writes(name, stream, mark, writes, n):
    for i in range(n):
        text = f"{name.decode()} stream={stream:#x} size={writes[i].size}"
        operator_log.append((writes[i].addr, text))


callbacks = [INTERN(intern), DEFER(lambda d: 0), ALLOC(on_alloc), FREE(on_free),
             FREE_COMPLETED(on_free_completed), USE(lambda *a: None),
             NOTICE(lambda m: print("notice:", m.decode())), COLLECTIVE(lambda *a: None),
             SET_HOOK(lambda h: hooks.append(h)), WANTED(lambda: 1), MARK(lambda: 7),
             SINCE(lambda stream, mark: 1), OPERATOR_WRITES(on_operator_writes)]
api = HostApi(2, *callbacks)

adapter = ctypes.CDLL(sys.argv[1])
adapter.xsc_torch_attach.argtypes = [ctypes.POINTER(HostApi)]
print("attach", adapter.xsc_torch_attach(ctypes.byref(api)), "hooks", len(hooks))
print("poll before CUDA init", ctypes.CDLL(sys.argv[1]).xsc_torch_poll())

side = None


def main():
    global side
    a = torch.empty(1 << 20, device="cuda")  # probe: alloc a
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        b = torch.empty(1 << 20, device="cuda")  # probe: alloc b
    names.update({a.data_ptr(): "a", b.data_ptr(): "b"})
    print(f"side stream {side.cuda_stream:#x}")
    print("poll after CUDA init", adapter.xsc_torch_poll())
    del a  # probe: free a
    b.record_stream(torch.cuda.default_stream())
    del b  # probe: free b
    torch.cuda.synchronize()
    c = torch.empty(16, device="cuda", dtype=torch.uint8)  # probe: later alloc
    del c
    print("launch hook stack:", top(hooks[0]()))  # probe: launch hook


def operators():
    x = torch.zeros(1 << 20, device="cuda")
    with torch.cuda.stream(side):
        x.add_(1)
    y = torch.empty_like(x)
    torch.mul(x, 2, out=y)
    x.record_stream(side)
    x.index_fill_(0, torch.tensor([0], device="cuda"), 5.0)
    x[::2].mul_(3)
    torch.cuda.synchronize()
    op_names = {x.data_ptr(): "x", y.data_ptr(): "y"}
    for addr, text in operator_log:
        if addr in op_names:
            print("operator", op_names[addr], text)


main()
for kind, addr, text in log:
    if addr in names:
        print(kind, names[addr], text)
operators()

# The adapter keeps calling this host API for as long as the allocator lives
# (the whole process), but the table and its callbacks are Python objects
# that interpreter finalization frees; leave before that.
sys.stdout.flush()
os._exit(0)
