"""An elementwise result made under a side stream, read by the default stream.

    python3 fresh_side.py race|copy-race|add-race|sum-race|cat-race|index-race|
                          foreach-race|norm-race|wait [--rounds N]

Each round the side stream runs a long matmul, then computes y = x * 2
(an elementwise kernel: nothing in its launch says it writes y, and no
operator schema marks y written, since y is a new tensor). The default
stream then multiplies y by w (a cuBLAS product reading y) or copies it to
the host.

  race       the product does not wait for the side stream: it may read y's
             block before the side stream fills it
  copy-race  the same with a copy to the host (y.to("cpu"))
  add-race   the same with an elementwise kernel (y + 1), which takes y as
             an input of its operand array
  sum-race   the same with a reduction (y.sum()), which reads y through its
             ReduceOp's source pointer
  cat-race   the same with a concatenation (torch.cat([y, y])), which reads
             y through the entries of its input table that the launch fills
  index-race the same with an indexing kernel (y.index_select(0, rows)),
             which reads y through the input pointer of a gather kernel
  foreach-race the same with a foreach kernel adding y into a zeroed
             tensor in place (torch._foreach_add_([acc], [y]), as an
             optimizer's step does), which reads y through its second list
  norm-race  the same with torch._foreach_norm([y]) (as clip_grad_norm_
             runs it), whose kernel reads its one list
  wait       the default stream waits for the side stream first (correct)

Each y is memory no tensor held before (the matmuls write into buffers
made up front, and every tensor a stream used is kept until the end), so
the read races with nothing but y's own fill; one that comes early reads
what the new memory held. The script prints how many rounds came out
wrong and exits 0 either way: the checker decides. Lines tagged "# xsc:"
are referred to by the test suite.
"""
import argparse
import sys

import torch

N = 1024          # y is N x N float32 (4 MiB)
BUSY = 4096       # the side stream's long work: BUSY x BUSY matmuls
BUSY_STEPS = 3


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["race", "copy-race", "add-race", "sum-race", "cat-race",
                                         "index-race", "foreach-race", "norm-race",
                                         "wait"])
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
    busy = [torch.empty(BUSY, BUSY, device="cuda") for _ in range(2)]
    rows = torch.arange(N, device="cuda")
    torch.cuda.synchronize()
    kept, results = [], []
    for _ in range(args.rounds):
        side.wait_stream(default)  # x, w, big and busy exist before the side stream uses them
        with torch.cuda.stream(side):
            for step in range(BUSY_STEPS):
                torch.matmul(big if step == 0 else busy[(step + 1) % 2], big, out=busy[step % 2])
            y = x * 2  # xsc: fill y
        if args.mode == "wait":
            default.wait_stream(side)
        if args.mode == "copy-race":
            results.append(y.to("cpu", non_blocking=False))  # xsc: copy y
        elif args.mode == "add-race":
            results.append((y + 1) - 1)  # xsc: add y
        elif args.mode == "sum-race":
            results.append(y.sum() / (N * N))  # xsc: sum y
        elif args.mode == "cat-race":
            results.append(torch.cat([y, y]))  # xsc: cat y
        elif args.mode == "index-race":
            results.append(y.index_select(0, rows))  # xsc: index y
        elif args.mode == "foreach-race":
            acc = torch.zeros_like(y)
            torch._foreach_add_([acc], [y])  # xsc: foreach y
            results.append(acc)
        elif args.mode == "norm-race":
            results.append(torch._foreach_norm([y])[0] / N)  # xsc: norm y
        else:
            results.append(y @ w)  # xsc: read y
        kept.append(y)
    torch.cuda.synchronize()
    wrong = sum(bool((r.cpu() != 2).any()) for r in results)
    print(f"fresh_side {args.mode}: {wrong}/{args.rounds} rounds wrong")
    return 0


if __name__ == "__main__":
    sys.exit(main())
