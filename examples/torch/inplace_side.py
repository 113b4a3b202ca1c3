"""An in-place update on a side stream that the default stream does not wait for.

    python3 inplace_side.py race|wait|read-first|read-first-wait

x is created on the default stream; the side stream waits for it, then
updates it in place (x.add_(1) under torch.cuda.stream(side)). The default
stream reads x (x.sum()).

  race             the read comes after the update with no wait: it may see
                   x before the update lands
  wait             the default stream waits for the side stream first
                   (correct)
  read-first       the default stream reads x before the update, and the
                   side stream never waits for that read: the update may land
                   while the read runs
  read-first-wait  the side stream waits for the read first (correct)

The script prints what it read and exits 0 either way: the checker decides.
Lines tagged "# xsc:" are referred to by the test suite.
"""
import argparse
import sys

import torch

N = 1 << 22  # 16 MiB of float32


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["race", "wait", "read-first", "read-first-wait"])
    args = parser.parse_args(argv)

    default = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    print(f"{args.mode}: default stream {default.cuda_stream:#x}, side stream {side.cuda_stream:#x}")
    sys.stdout.flush()
    x = torch.ones(N, device="cuda")  # xsc: x alloc
    side.wait_stream(default)  # x exists before the side stream touches it
    total = None
    if args.mode.startswith("read-first"):
        total = x.sum()  # xsc: read first
        if args.mode == "read-first-wait":
            side.wait_stream(default)
    with torch.cuda.stream(side):
        x.add_(1)  # xsc: in-place update
    if args.mode == "wait":
        default.wait_stream(side)
    if total is None:
        total = x.sum()  # xsc: read after
    torch.cuda.synchronize()
    print(f"{args.mode}: sum {total.item():.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
