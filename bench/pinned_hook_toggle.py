#!/usr/bin/env python3
"""What turning the PyTorch adapter's host-operator callback on and off
costs, on the CPU (no GPU, no runtime).

Each `loss.item()` turns the callback on (its copy into pinned memory) and
off (its synchronization): runtime/host/pinned_uses.cpp. This drives
libxstream_torch.so through the version-6 stand-in host API
(test/torch/Inputs/fake_host_api.py) and times loops of 50 small CPU
operators with the callback off, with one on/off pair before each loop
(the hook called from Python through ctypes, as the stand-in does), and
with it on (where the stand-in's host accesses, Python callbacks, add
their own cost), in interleaved rounds.

Usage: bench/pinned_hook_toggle.py [--build build] [--rounds 5] [--loops 2000]
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "torch", "Inputs"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--loops", type=int, default=2000)
    args = parser.parse_args()
    library = os.path.join(args.build, "lib", "libxstream_torch.so")
    if not os.path.exists(library):
        print(f"pinned_hook_toggle: {library} not found (build with torch importable)",
              file=sys.stderr)
        return 2
    import torch
    from fake_host_api import FakeRuntime
    torch.set_num_threads(1)
    rt = FakeRuntime(library, version=6, record=False)
    if rt.install_operators() != 0 or rt.pinned_pending_hook is None:
        print("pinned_hook_toggle: the adapter registered no pending hook", file=sys.stderr)
        return 1
    x = torch.zeros(16)

    def loop_us(toggle):
        start = time.perf_counter()
        for _ in range(args.loops):
            if toggle:
                rt.pinned_pending_hook(1)
                rt.pinned_pending_hook(0)
            for _ in range(50):
                torch.add(x, x)
        return (time.perf_counter() - start) / args.loops * 1e6

    rt.pinned_pending_hook(1)  # the callback is added at the first call
    rt.pinned_pending_hook(0)
    times = {"off": [], "on/off pair": [], "on": []}
    for _ in range(args.rounds):
        times["off"].append(loop_us(False))
        times["on/off pair"].append(loop_us(True))
        rt.pinned_pending_hook(1)
        times["on"].append(loop_us(False))
        rt.pinned_pending_hook(0)
    for name, values in times.items():
        print(f"{name:12s} {statistics.median(values):8.1f} us per 50 operators")
    extra = statistics.median(t - o for t, o in zip(times["on/off pair"], times["off"]))
    print(f"one on/off pair: {extra:.2f} us (median of the rounds' differences)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
