"""The adapter's host-operator callback turned on and off by the runtime's
pinned-memory hook, on the CPU (no GPU, no runtime).

Usage: pinned_pending_cpu.py ADAPTER.so

Drives libxstream_torch.so through a stand-in host API of version 6
(fake_host_api.py) that takes every host access as one of pinned memory,
calls the hook the adapter registered as the runtime does (1: a device use
of pinned memory may be pending; 2: only device reads of it may be; 0: none
is), and prints, after a few CPU
operators, whether the callback runs and which operators it followed.
"""
import os
import sys
import threading

sys.stdout.reconfigure(line_buffering=True)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

from fake_host_api import FakeRuntime  # noqa: E402

rt = FakeRuntime(sys.argv[1], version=6)
print("attach", rt.attach_result)
print("install", rt.install_operators())
print("pending hook registered:", rt.pinned_pending_hook is not None)
for line in rt.notices:
    print("notice:", line)

x = torch.zeros(1024)


def followed(label):
    start = len(rt.host_accesses)
    x.add_(1.0)
    total = float(x.sum())
    accesses = sorted({f"{name}({'write' if access == 1 else 'read'})"
                       for name, _, _, access in rt.host_accesses[start:]})
    stats = rt.counters()
    print(f"{label}: host_callback={stats['host_callback']} "
          f"host_writers={stats['host_writers']} sum={total:.0f} "
          f"followed: {', '.join(accesses) or 'nothing'}")


followed("before any device use")
rt.pinned_pending_hook(1)
followed("pending")
rt.pinned_pending_hook(0)
followed("settled")
rt.pinned_pending_hook(1)
followed("pending again")
other = threading.Thread(target=lambda: followed("another thread"))
other.start()
other.join()
rt.pinned_pending_hook(0)
followed("settled again")
# 2: only device reads of pinned memory pending (uploads): host writers
# only, through the writer kernels, and the callback stays off.
rt.pinned_pending_hook(2)
followed("reads pending")
# A thread the runtime starts has the writer kernels' key from its start.
other = rt.start_thread(lambda: followed("reads pending, another thread"))
other.start()
other.join()
rt.pinned_pending_hook(1)
followed("a write pending too")
rt.pinned_pending_hook(2)
followed("reads pending again")
rt.pinned_pending_hook(0)
followed("settled at last")


def touched(label, operators):
    """The host accesses of x's bytes that `operators` make."""
    start = len(rt.host_accesses)
    operators()
    low, high = x.data_ptr(), x.data_ptr() + x.nbytes
    accesses = sorted({f"{name}({'write' if access == 1 else 'read'})"
                       for name, addr, size, access in rt.host_accesses[start:]
                       if low <= addr < high})
    print(f"{label}: followed: {', '.join(accesses) or 'nothing'}")


def views_and_shapes():
    x[:512]
    x.view(32, 32).t()
    x.detach()
    x.reshape(32, 32)
    x.split(256)
    torch.zeros_like(x)
    torch.empty_like(x)
    x.new_zeros(4)
    x.unsqueeze_(0)
    x.squeeze_(0)
    x.is_pinned()


# Views, shape-only factories and in-place metadata changes read and write
# no element of x; a view that must copy does so by an operator inside it.
rt.pinned_pending_hook(1)
touched("views and shapes", views_and_shapes)
touched("a copy inside a view", lambda: x.view(32, 32)[:, ::2].contiguous())
touched("a read after them", lambda: float(x[:512].sum()))
rt.pinned_pending_hook(0)
