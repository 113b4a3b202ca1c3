"""An elementwise result made under a side stream, read by the default stream.

    python3 fresh_side.py race|copy-race|wait [--rounds N]

Each round the side stream runs a long matmul, then computes y = x * 2
(an elementwise kernel: nothing in its launch says it writes y, and no
operator schema marks y written, since y is a new tensor). The default
stream then multiplies y by w (a cuBLAS product reading y) or copies it to
the host.

  race       the product does not wait for the side stream: it may read y's
             block before the side stream fills it
  copy-race  the same with a copy to the host (y.to("cpu"))
  wait       the default stream waits for the side stream first (correct)

A block holding -1s is handed back to the side stream right before y is
allocated there, so a read that comes early sees them. Every tensor a
stream used is kept until the end. The script prints how many rounds came
out wrong and exits 0 either way: the checker decides. Lines tagged
"# xsc:" are referred to by the test suite.
"""
import argparse
import sys

import torch

N = 1024          # y is N x N float32 (4 MiB)
BUSY = 4096       # the side stream's long work: BUSY x BUSY matmuls
BUSY_STEPS = 3


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["race", "copy-race", "wait"])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    if not torch.cuda.is_available():
        print("fresh_side.py: no CUDA device available", file=sys.stderr)
        return 2
    default = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    x = torch.ones(N, N, device="cuda")
    w = torch.full((N, N), 1.0 / N, device="cuda")
    big = torch.full((BUSY, BUSY), 1.0 / BUSY, device="cuda")
    torch.cuda.synchronize()
    kept, results = [], []
    for _ in range(args.rounds):
        side.wait_stream(default)  # x, w and big exist before the side stream reads them
        with torch.cuda.stream(side):
            poison = torch.full((N, N), -1.0, device="cuda")
            del poison  # its block goes back to the side stream: y gets it
            busy = big
            for _ in range(BUSY_STEPS):
                busy = busy @ big
            kept.append(busy)
            y = x * 2  # xsc: fill y
        if args.mode == "wait":
            default.wait_stream(side)
        if args.mode == "copy-race":
            results.append(y.to("cpu", non_blocking=False))  # xsc: copy y
        else:
            results.append(y @ w)  # xsc: read y
        kept.append(y)
    torch.cuda.synchronize()
    wrong = sum(bool((r.cpu() != 2).any()) for r in results)
    print(f"fresh_side {args.mode}: {wrong}/{args.rounds} rounds wrong")
    return 0


if __name__ == "__main__":
    sys.exit(main())
