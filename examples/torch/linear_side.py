"""A linear layer on a side stream whose output the default stream reads.

    python3 linear_side.py race|wait

The inputs are made on the default stream; the side stream waits for them
and computes y = x @ w.T + b (torch.nn.functional.linear, a cuBLAS matrix
product that writes all of y). The default stream then reads y (y.sum()).

  race  the read does not wait for the side stream: it may see y before the
        product lands
  wait  the default stream waits for the side stream first (correct)

The script prints what it read and exits 0 either way: the checker decides.
Lines tagged "# xsc:" are referred to by the test suite.
"""
import argparse
import sys

import torch


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["race", "wait"])
    args = parser.parse_args(argv)

    default = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    print(f"{args.mode}: default stream {default.cuda_stream:#x}, side stream {side.cuda_stream:#x}")
    sys.stdout.flush()
    x = torch.ones(1024, 512, device="cuda")
    w = torch.ones(256, 512, device="cuda")
    b = torch.ones(256, device="cuda")
    side.wait_stream(default)  # the inputs exist before the side stream reads them
    with torch.cuda.stream(side):
        y = torch.nn.functional.linear(x, w, b)  # xsc: linear
    if args.mode == "wait":
        default.wait_stream(side)
    total = y.sum()  # xsc: read y
    torch.cuda.synchronize()
    print(f"sum of y: {total.item():.0f} (expected {1024 * 256 * 513})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
