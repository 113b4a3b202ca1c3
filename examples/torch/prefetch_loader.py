"""A data loader that prefetches batches on a side stream, and how it breaks.

    python3 prefetch_loader.py bug|event|record_stream [--steps N]

The loader copies each batch host-to-device on its own stream: pinned host
tensors, non_blocking copies into device tensors allocated under that
stream, so the batches are blocks of the side stream. The training step
waits for the copy (wait_stream), computes on the default stream, and then
releases the batch. The loader runs one batch ahead.

  bug            the consumer drops the batch after enqueueing its compute;
                 nothing orders the side stream after that compute, so the
                 caching allocator hands the block to the batch after next,
                 whose copy may land while the compute still reads it.
  event          the consumer records an event after its compute and the
                 side stream waits on it before the batch is dropped.
  record_stream  batch.record_stream(default stream) before the drop: the
                 allocator reuses the block only after that compute is done.

Each step's result is compared with one computed from the host copy of the
batch; a mismatch counts as a corrupted step. `bug` exits 0 either way (the
checker decides); the clean modes exit 1 on corruption.
"""
import argparse
import sys

import torch

BATCH, FEATURES = 512, 1024
HOST_BATCHES = 4


class SideStreamLoader:
    """Copies batches to the device on its own stream, one batch ahead."""

    def __init__(self, host_batches):
        self.host_batches = host_batches
        self.stream = torch.cuda.Stream()

    def load(self, index: int) -> torch.Tensor:
        host = self.host_batches[index % len(self.host_batches)]
        with torch.cuda.stream(self.stream):
            batch = torch.empty(host.shape, dtype=host.dtype, device="cuda")  # xsc: batch alloc
            batch.copy_(host, non_blocking=True)  # xsc: batch copy
        return batch


def consume(batch: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Enough dependent matmuls over the batch that the next copies overlap them."""
    x = batch
    for _ in range(8):
        x = torch.tanh(x @ weight)  # xsc: consumer read
    return x.sum(dim=1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["bug", "event", "record_stream"])
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args(argv)
    if args.steps < 3:
        parser.error("need --steps >= 3")
    if not torch.cuda.is_available():
        print("prefetch_loader.py: no CUDA device available", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    host_batches = [torch.randn(BATCH, FEATURES).pin_memory() for _ in range(HOST_BATCHES)]
    weight = torch.randn(FEATURES, FEATURES, device="cuda") / FEATURES ** 0.5
    # What each host batch must give, computed from device copies made and
    # finished before the loop.
    expected = []
    for host in host_batches:
        expected.append(consume(host.to("cuda"), weight))
    torch.cuda.synchronize()

    loader = SideStreamLoader(host_batches)
    default = torch.cuda.current_stream()
    print(f"{args.mode}: default stream {default.cuda_stream:#x}, "
          f"loader stream {loader.stream.cuda_stream:#x}", flush=True)
    results = []
    upcoming = loader.load(0)
    for step in range(args.steps):
        batch = upcoming
        default.wait_stream(loader.stream)
        upcoming = loader.load(step + 1)
        results.append(consume(batch, weight))
        if args.mode == "bug":
            del batch  # xsc: release bug
        elif args.mode == "event":
            loader.stream.wait_event(default.record_event())
            del batch  # xsc: release event
        else:
            batch.record_stream(default)
            del batch  # xsc: release record_stream
    del upcoming  # only its own copy used it
    torch.cuda.synchronize()

    corrupted = sum(
        0 if torch.allclose(got, expected[step % HOST_BATCHES], rtol=1e-4, atol=1e-4) else 1
        for step, got in enumerate(results))
    verdict = "PASS" if corrupted == 0 else "FAIL"
    print(f"{args.mode}: [{verdict}] {corrupted}/{args.steps} steps corrupted")
    if corrupted and args.mode != "bug":
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
