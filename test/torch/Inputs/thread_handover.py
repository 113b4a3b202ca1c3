"""A buffer handed from one Python thread to another through a queue.

    python3 thread_handover.py MODE

A worker thread, started before any of the work below, does its part on a
side stream of its own and puts what it made in a queue.Queue; the main
thread takes it from the queue:
    read        the worker downloads a tensor into pinned memory and
                synchronizes its stream before the put; the main thread
                reads the pinned tensor (ordered through the queue)
    read-early  the same, but the worker puts before it synchronizes (and
                synchronizes once the main thread has read): the read is a
                use before ready
    free        the worker reads the main thread's device tensor on its
                stream and synchronizes before the put; the main thread
                then frees the tensor (ordered through the queue)
    free-early  the same, the put before the synchronization: the free is
                unordered with the worker's read (reported under strict=1)
Prints "done" and exits 0.
"""
import queue
import sys
import threading

import torch

MODES = ("read", "read-early", "free", "free-early")


def worker(mode, jobs, results, acks):
    early = mode.endswith("-early")
    source = jobs.get()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        if mode.startswith("read"):
            made = torch.empty(source.shape, dtype=source.dtype, pin_memory=True)
            made.copy_(source, non_blocking=True)
        else:
            made = source.sum()
    del source  # the main thread's del frees it
    if not early:
        side.synchronize()
    results.put(made)  # xsc: put
    acks.get()
    side.synchronize()


def main(argv):
    if len(argv) != 2 or argv[1] not in MODES:
        print(f"usage: thread_handover.py {{{'|'.join(MODES)}}}", file=sys.stderr)
        return 2
    mode = argv[1]
    jobs, results, acks = queue.Queue(), queue.Queue(), queue.Queue()
    thread = threading.Thread(target=worker, args=(mode, jobs, results, acks))
    thread.start()
    x = torch.full((1 << 20,), 3.0, device="cuda")
    torch.cuda.synchronize()
    jobs.put(x)
    made = results.get()
    if mode.startswith("read"):
        total = float(made.sum())  # xsc: read
        print(f"read {total:.0f}")
    else:
        del x  # xsc: free
    acks.put(None)
    thread.join()
    torch.cuda.synchronize()
    print("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
