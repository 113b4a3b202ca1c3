"""Producer/consumer pipelines across two CUDA streams with CuPy's memory pool.

A producer stream ("all-gather") fills each layer's parameters into a fresh
array; a consumer stream multiplies by them (cuBLAS). CuPy's pool ties each
block to the stream that was current at its allocation, so once the
producer's array is dropped the next allocation on the producer stream may
receive the same block while the consumer's matmul is still reading it.
Both streams are non-blocking: nothing orders them but the program.

Modes (one per run):
  buggy           drop the array right after enqueueing the consumer
  stall           the producer waits on the consumer's event, then the drop
                  (correct)
  keep_ref        keep a reference, wait on the event one layer later
                  (correct)
  sync            the host waits for the consumer before the drop (correct)
  wait_after_del  the producer's wait comes after the drop (still a bug)

Usage: python3 pipelines.py MODE [--trials N] [--layers L] [--hidden H]

Every trial checks the consumer's results: one differing from the expected
value means the producer overwrote a block that was still being read. The
script prints the corruption count and exits 0 either way; lines tagged
"# xsc:" are referred to by the test suite.
"""
import argparse
import sys

import cupy as cp

MODES = ("buggy", "stall", "keep_ref", "sync", "wait_after_del")


def all_gather(producer, layer_id, hidden):
    """Stand-in for an all-gather: a new array filled with layer_id on the producer stream."""
    with producer:
        return cp.full((hidden, hidden), float(layer_id), dtype=cp.float32)  # xsc: alloc


def forward(consumer, producer, x, params):
    """The consumer: waits for the producer's fill, then a matmul with the layer's weights."""
    consumer.wait_event(producer.record())
    with consumer:
        return x @ params  # xsc: consumer


def run(mode, layers, hidden):
    producer = cp.cuda.Stream(non_blocking=True)
    consumer = cp.cuda.Stream(non_blocking=True)
    with consumer:
        x = cp.ones((hidden, hidden), dtype=cp.float32)
    results = []
    keepalive, keepalive_event = None, None
    params = all_gather(producer, 1, hidden)
    for layer_id in range(2, layers + 2):
        if keepalive is not None:
            producer.wait_event(keepalive_event)
            keepalive = None  # the previous layer's array goes only now
        results.append((forward(consumer, producer, x, params), layer_id - 1))
        if mode == "stall":
            producer.wait_event(consumer.record())
            del params
        elif mode == "keep_ref":
            keepalive, keepalive_event = params, consumer.record()
            del params
        elif mode == "sync":
            consumer.synchronize()
            del params
        elif mode == "wait_after_del":
            done = consumer.record()
            del params  # xsc: free wait_after_del
            producer.wait_event(done)
        else:
            del params  # xsc: free buggy
        if layer_id <= layers:
            params = all_gather(producer, layer_id, hidden)
    producer.wait_event(consumer.record())
    keepalive = None
    cp.cuda.Device().synchronize()
    worst = 0.0
    for result, layer_id in results:
        worst = max(worst, float(cp.abs(result - hidden * layer_id).max()))
    return worst


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=2048)
    args = parser.parse_args(argv)
    if args.trials < 1 or args.layers < 1 or args.hidden < 1:
        parser.error("--trials, --layers and --hidden must be >= 1")
    if cp.cuda.runtime.getDeviceCount() < 1:
        print("pipelines.py: no CUDA device available", file=sys.stderr)
        return 2
    corrupted = sum(run(args.mode, args.layers, args.hidden) > 0 for _ in range(args.trials))
    print(f"cupy pipelines {args.mode}: {corrupted}/{args.trials} trials corrupted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
