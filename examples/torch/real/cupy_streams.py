"""CuPy: its memory pool and its streams, used the way its documentation shows.

    python3 cupy_streams.py [--rounds N]

Each round, two non-blocking CuPy streams each upload a batch from pinned
host memory, square it, reduce it and download the sums; a third stream
waits on both streams' events and combines their results. Arrays are
dropped while their streams still run (CuPy's pool hands a block out again
only on the stream it was freed on). Exits 1 when a sum is wrong.
"""
import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("need --rounds >= 1")
    import cupy as cp
    import numpy as np

    if cp.cuda.runtime.getDeviceCount() < 1:
        print("cupy_streams.py: no CUDA device available", file=sys.stderr)
        return 2
    streams = [cp.cuda.Stream(non_blocking=True) for _ in range(2)]
    combine = cp.cuda.Stream(non_blocking=True)
    n = 1 << 20
    wrong = 0
    for rnd in range(args.rounds):
        host = [cp.cuda.alloc_pinned_memory(n * 4) for _ in streams]
        views = [np.frombuffer(h, np.float32, n) for h in host]
        partial = []
        events = []
        for k, (stream, view) in enumerate(zip(streams, views)):
            view[:] = float(rnd % 7 + k + 1)
            with stream:
                x = cp.empty(n, cp.float32)
                x.set(view, stream=stream)
                y = x * x
                partial.append(y.sum())
                del x, y  # freed on this stream while its work still runs
                events.append(stream.record())
        with combine:
            for event in events:
                combine.wait_event(event)
            total = partial[0] + partial[1]
            got = float(total.get(stream=combine))
        expected = n * sum(float(rnd % 7 + k + 1) ** 2 for k in range(len(streams)))
        wrong += got != expected
        del partial, total
    print(f"cupy_streams: {args.rounds} rounds, {wrong} wrong sums")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
