"""Races between CuPy's own kernels on two streams, each with its correct twin.

    python3 live_races.py MODE [--rounds N]

ready           A read before the write lands. The producer stream computes
                `y = x * 2` behind a long matmul; the consumer stream reads
                y (`y + 0`) with no wait, and may read the new memory's old
                bytes.
ready-wait      The consumer waits on the producer's event first.
overwrite       A write over a pending read. The consumer waits for each
                round's weights, then reads them behind a long matmul; the
                producer refills them (`w.fill`) for the next round with no
                wait, and may land first.
overwrite-wait  The producer waits on the consumer's event before the fill.

Both streams are non-blocking. Every array a stream used is kept until the
device is synchronized at the end, so that no free races, and each y is
memory no array held before, so that the read races with nothing but y's
own write; each round's result is checked at the end. Prints how many
rounds came out wrong and exits 0 either way (the checker decides). Lines
tagged "# xsc:" are found by the tests.
"""
import argparse
import sys

import cupy as cp

MODES = ("ready", "ready-wait", "overwrite", "overwrite-wait")
N = 1 << 22          # 16 MiB of float32 per array
BUSY = 4096          # the long work: BUSY x BUSY float32 matmuls
BUSY_STEPS = 2


def busy(big, out):
    """A few milliseconds of work on the current stream, written into the
    two buffers of `out`: it frees nothing whose memory a later array of
    the fixture could get."""
    for step in range(BUSY_STEPS):
        cp.matmul(big if step == 0 else out[(step + 1) % 2], big, out=out[step % 2])


def ready(producer, consumer, big, out, rounds, wait):
    x = cp.full(N, 1.0, dtype=cp.float32)
    cp.cuda.Device().synchronize()
    kept, results = [], []
    for _ in range(rounds):
        with producer:
            busy(big, out)
            y = x * 2  # xsc: ready write
        if wait:
            consumer.wait_event(producer.record())
        with consumer:
            results.append(y + 0)  # xsc: ready read
        kept.append(y)
    cp.cuda.Device().synchronize()
    return sum(bool((r != 2).any()) for r in results)


def overwrite(producer, consumer, big, out, rounds, wait):
    with producer:
        w = cp.full(N, 1.0, dtype=cp.float32)
    cp.cuda.Device().synchronize()
    results = []
    for round_ in range(rounds):
        # The consumer reads this round's weights only once their fill
        # landed (the first fill was synchronized above).
        consumer.wait_event(producer.record())
        with consumer:
            busy(big, out)
            results.append((w * 1, round_ + 1))  # xsc: overwrite read
        if wait:
            producer.wait_event(consumer.record())
        with producer:
            w.fill(round_ + 2)  # xsc: overwrite write
    cp.cuda.Device().synchronize()
    return sum(bool((r != value).any()) for r, value in results)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    if cp.cuda.runtime.getDeviceCount() < 1:
        print("live_races.py: no CUDA device available", file=sys.stderr)
        return 2
    producer = cp.cuda.Stream(non_blocking=True)
    consumer = cp.cuda.Stream(non_blocking=True)
    big = cp.full((BUSY, BUSY), 1.0 / BUSY, dtype=cp.float32)
    out = [cp.empty((BUSY, BUSY), dtype=cp.float32) for _ in range(2)]
    cp.cuda.Device().synchronize()
    run = ready if args.mode.startswith("ready") else overwrite
    wrong = run(producer, consumer, big, out, args.rounds, args.mode.endswith("-wait"))
    print(f"cupy live_races {args.mode}: {wrong}/{args.rounds} rounds wrong")
    return 0


if __name__ == "__main__":
    sys.exit(main())
