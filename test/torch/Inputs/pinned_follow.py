"""When the adapter follows PyTorch's host operators on pinned memory: only
while a device use of pinned memory may be pending.

    pinned_follow.py ADAPTER_LIBRARY

Run under the runtime (LD_PRELOAD). Pins a tensor and works on it on the
host: nothing is followed (the adapter's RecordFunction callback, which
boxes every operator's arguments, is not there yet). Uploads it on a busy
stream and refills it before the upload ran: the upload turns the callback
on before its call returns, so the refill right after it is seen (a write
after read, reported at the refill's line). A device synchronization
settles the upload: the callback goes off, and host work on the tensor is
not followed. loss.item() copies into pinned memory and synchronizes at
once: it leaves the callback off. A download then read on the host with no
synchronization turns it on again (a use before ready at the read).
Where the checker runs on its own thread it turns the callback off a
little later: the counters are exact with checker_thread=0.
"""
import ctypes
import sys

import torch

N = 1 << 20
BUSY = 200_000_000  # cycles the copy stream spends before the copy


def stats(adapter):
    """The adapter's counters, as "name=value" words in a dict."""
    words = adapter.xsc_torch_operator_stats().decode().split()
    return dict(word.split("=", 1) for word in words)


def main():
    adapter = ctypes.CDLL(sys.argv[1])  # the copy the runtime loaded
    adapter.xsc_torch_operator_stats.restype = ctypes.c_char_p
    copy_stream = torch.cuda.Stream()
    gpu = torch.empty(N, device="cuda")
    staging = torch.empty(N, pin_memory=True)
    staging.fill_(1.0)
    total = float(staging.sum())
    s = stats(adapter)
    print(f"pinned, no copy: host_callback={s['host_callback']} host_calls={s['host_calls']} "
          f"sum={total:.0f}", flush=True)
    torch.cuda.synchronize()
    with torch.cuda.stream(copy_stream):
        torch.cuda._sleep(BUSY)
        gpu.copy_(staging, non_blocking=True)  # pinned: upload
    staging.fill_(2.0)  # pinned: refill
    s = stats(adapter)
    print(f"after the upload: host_callback={s['host_callback']} "
          f"host_calls={int(s['host_calls']) > 0}", flush=True)
    torch.cuda.synchronize()
    print(f"upload sent the refill: {bool((gpu != 1.0).any())}", flush=True)
    s = stats(adapter)
    calls = int(s["host_calls"])
    staging.fill_(3.0)
    staging.add_(1.0)
    s = stats(adapter)
    print(f"after the synchronization: host_callback={s['host_callback']} "
          f"new host_calls={int(s['host_calls']) - calls}", flush=True)
    loss = gpu.sum()
    for _ in range(3):
        loss.item()
    staging.fill_(5.0)
    s = stats(adapter)
    print(f"after item(): host_callback={s['host_callback']} "
          f"new host_calls={int(s['host_calls']) - calls}", flush=True)
    with torch.cuda.stream(copy_stream):
        torch.cuda._sleep(BUSY)
        back = gpu.to("cpu", non_blocking=True)  # pinned: download
    total = float(back.sum())  # pinned: host read
    s = stats(adapter)
    print(f"after the download: host_callback={s['host_callback']} read={total:.0f}", flush=True)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
