"""A per-layer cache kept in host memory between uses, and how it breaks.

    python3 offload_cache.py bug|waits [--steps N] [--layers L]

Each layer owns a cache that grows by one row a step and lives in pinned
host memory while other layers run, the way a decoder's offloaded
key/value cache does. A layer's turn:

  1. the default stream waits for the prefetch stream, and the next
     layer's cache is copied back to the device on the prefetch stream
     (non_blocking, into a block allocated under that stream);
  2. the default stream reads this layer's prefetched cache and appends
     the step's row (a new tensor: the prefetched block is dropped);
  3. the grown cache is copied to the host on the default stream
     (non_blocking, into pinned memory) and the device copy is dropped.

  bug    the prefetch stream never waits for the default stream. The block
         dropped in 2 goes back to the prefetch stream's pool and the next
         prefetch is allocated in it while the default stream may still
         read it; and a prefetch reads host memory that the default
         stream's copy in 3 may not have written yet.
  waits  the prefetch stream waits for the default stream before each
         prefetch, so both are ordered (the drop in 2 is still ahead of
         that wait: a latent free-before-wait, not a race).

The final caches are compared with the same steps run on one stream with
nothing offloaded. `bug` exits 0 either way (the checker decides); `waits`
exits 1 on a difference.
"""
import argparse
import sys

import torch

ROWS, WIDTH = 64, 1024


def attend(cache: torch.Tensor, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Reads the whole cache, after enough dependent work that later copies overlap it."""
    for _ in range(6):
        x = torch.tanh(x @ weight)
    scores = torch.softmax(cache @ x, dim=0)  # xsc: cache read
    return torch.tanh(x + scores @ cache)


class OffloadedCache:
    def __init__(self, initial, waits: bool):
        self.layers = [c.pin_memory() for c in initial]
        self.stream = torch.cuda.Stream()
        self.waits = waits

    def prefetch(self, layer: int) -> None:
        with torch.cuda.stream(self.stream):
            self.layers[layer] = self.layers[layer].to("cuda", non_blocking=True)  # xsc: prefetch

    def turn(self, layer: int, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        default = torch.cuda.current_stream()
        default.wait_stream(self.stream)
        if self.waits:
            self.stream.wait_stream(default)
        self.prefetch((layer + 1) % len(self.layers))
        x = attend(self.layers[layer], x, weight)
        self.layers[layer] = torch.cat([self.layers[layer], x.unsqueeze(0)])  # xsc: drop
        self.layers[layer] = self.layers[layer].to("cpu", non_blocking=True)  # xsc: offload
        return x


def run_on_device(initial, weight, steps: int) -> list:
    """The same steps with every cache on the device, one stream."""
    caches = [c.to("cuda") for c in initial]
    for step in range(steps):
        x = torch.full((WIDTH,), 0.01 * (step + 1), device="cuda")
        for layer in range(len(caches)):
            x = attend(caches[layer], x, weight)
            caches[layer] = torch.cat([caches[layer], x.unsqueeze(0)])
    return [c.cpu() for c in caches]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["bug", "waits"])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--layers", type=int, default=4)
    args = parser.parse_args(argv)
    if args.steps < 2 or args.layers < 3:
        parser.error("need --steps >= 2 and --layers >= 3")
    if not torch.cuda.is_available():
        print("offload_cache.py: no CUDA device available", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    initial = [torch.randn(ROWS, WIDTH) / WIDTH ** 0.5 for _ in range(args.layers)]
    weight = torch.randn(WIDTH, WIDTH, device="cuda") / WIDTH ** 0.5
    expected = run_on_device(initial, weight, args.steps)
    torch.cuda.synchronize()

    cache = OffloadedCache(initial, waits=args.mode == "waits")
    print(f"{args.mode}: default stream {torch.cuda.current_stream().cuda_stream:#x}, "
          f"prefetch stream {cache.stream.cuda_stream:#x}", flush=True)
    cache.prefetch(0)
    for step in range(args.steps):
        x = torch.full((WIDTH,), 0.01 * (step + 1), device="cuda")
        for layer in range(args.layers):
            x = cache.turn(layer, x, weight)
    torch.cuda.synchronize()

    final = [c.to("cpu") for c in cache.layers]
    differ = sum(0 if torch.allclose(got, want, rtol=1e-4, atol=1e-5) else 1
                 for got, want in zip(final, expected))
    verdict = "PASS" if differ == 0 else "FAIL"
    print(f"{args.mode}: [{verdict}] {differ}/{args.layers} layers' caches differ")
    if differ and args.mode != "bug":
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
