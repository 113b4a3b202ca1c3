"""Producer/consumer pipelines across two CUDA streams with PyTorch's caching allocator.

A producer stream ("all-gather") fills each layer's parameters into a fresh
buffer; the consumer (the default stream) runs a matmul on them. PyTorch's
caching allocator ties each block to the stream it was allocated on, so once
the producer's buffer is released the next allocation on the producer stream
may receive the same block while the consumer's matmul is still reading it.

Modes (one per run):
  buggy           release the buffer right after enqueueing the consumer
  record_stream   Tensor.record_stream(consumer) before the release (correct)
  stall           producer waits on the consumer's event, then release (correct)
  keep_ref        keep a reference, wait on the event one layer later (correct)
  resize          like buggy, but release with untyped_storage().resize_(0)
  view            like buggy, the consumer reads a view at an offset
  wait_after_del  the producer's wait is enqueued after the release (still a bug)
  two_consumers   a second consumer stream reads the buffer; only the first
                  one is waited on before the release (bug)

Usage: python3 pipelines.py MODE [--trials N] [--layers L] [--hidden H] [--mem-pool]

--mem-pool makes every trial's allocations from a torch.cuda.MemPool of its
own (torch.cuda.use_mem_pool), as programs that give a phase or a library
its own pool do; the pool's blocks follow the same per-stream reuse.

Every trial checks the consumer's results: a result differing from the
expected value means the producer overwrote a buffer that was still being
read. The script prints the corruption count and exits 0 either way; lines
tagged "# xsc:" are referred to by the test suite.
"""
import argparse
import sys

import torch

MODES = ("buggy", "record_stream", "stall", "keep_ref", "resize", "view", "wait_after_del",
         "two_consumers")


class Pipeline:
    def __init__(self, hidden: int, layers: int, view_offset: int = 0):
        self.hidden = hidden
        self.layers = layers
        self.param_size = hidden * hidden
        # Elements in front of the weights; the consumer reads the weights
        # through a view starting here (mode "view").
        self.view_offset = view_offset
        self.block_ptrs: list[int] = []

    def all_gather(self, stream: torch.cuda.Stream, layer_id: int) -> torch.Tensor:
        """Stand-in for an all-gather: a new buffer filled with layer_id on `stream`."""
        numel = self.view_offset + self.param_size
        with torch.cuda.stream(stream):
            params = torch.full((numel,), float(layer_id), device="cuda")  # xsc: alloc
        self.block_ptrs.append(params.data_ptr())
        return params

    def forward(self, params: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """The consumer: a matmul with the layer's weights, on the current stream."""
        weight = params[self.view_offset:].view(self.hidden, self.hidden)
        return x @ weight  # xsc: consumer

    def expected(self, layer_id: int) -> float:
        return float(self.hidden) * layer_id


def max_error(pipe: Pipeline, results, peaks=()) -> float:
    """Largest deviation of any result from its expected value (0 when intact)."""
    worst = 0.0
    for result, layer_id in results:
        worst = max(worst, (result - pipe.expected(layer_id)).abs().max().item())
    for peak, layer_id in peaks:
        worst = max(worst, abs(peak.item() - layer_id))
    # Every buffer of this trial is released only after this point.
    torch.cuda.synchronize()
    return worst


def run_buggy(pipe: Pipeline, x: torch.Tensor) -> float:
    ag_stream = torch.cuda.Stream()
    default = torch.cuda.default_stream()
    results = []
    prev_params = pipe.all_gather(ag_stream, 1)
    for layer_id in range(2, pipe.layers + 1):
        default.wait_stream(ag_stream)
        results.append((pipe.forward(prev_params, x), layer_id - 1))
        del prev_params  # xsc: free buggy
        prev_params = pipe.all_gather(ag_stream, layer_id)
    default.wait_stream(ag_stream)
    results.append((pipe.forward(prev_params, x), pipe.layers))
    del prev_params  # xsc: last free buggy
    return max_error(pipe, results)


def run_record_stream(pipe: Pipeline, x: torch.Tensor) -> float:
    ag_stream = torch.cuda.Stream()
    default = torch.cuda.default_stream()
    results = []
    prev_params = pipe.all_gather(ag_stream, 1)
    for layer_id in range(2, pipe.layers + 1):
        default.wait_stream(ag_stream)
        results.append((pipe.forward(prev_params, x), layer_id - 1))
        prev_params.record_stream(default)
        del prev_params  # xsc: free record_stream
        prev_params = pipe.all_gather(ag_stream, layer_id)
    default.wait_stream(ag_stream)
    results.append((pipe.forward(prev_params, x), pipe.layers))
    prev_params.record_stream(default)
    del prev_params
    return max_error(pipe, results)


def run_stall(pipe: Pipeline, x: torch.Tensor) -> float:
    ag_stream = torch.cuda.Stream()
    default = torch.cuda.default_stream()
    results = []
    prev_params = pipe.all_gather(ag_stream, 1)
    for layer_id in range(2, pipe.layers + 1):
        default.wait_stream(ag_stream)
        results.append((pipe.forward(prev_params, x), layer_id - 1))
        fwd_done = default.record_event()
        ag_stream.wait_event(fwd_done)  # order the producer after the consumer...
        del prev_params  # ...before the block can be handed out again
        prev_params = pipe.all_gather(ag_stream, layer_id)
    default.wait_stream(ag_stream)
    results.append((pipe.forward(prev_params, x), pipe.layers))
    ag_stream.wait_event(default.record_event())
    del prev_params
    return max_error(pipe, results)


def run_keep_ref(pipe: Pipeline, x: torch.Tensor) -> float:
    ag_stream = torch.cuda.Stream()
    default = torch.cuda.default_stream()
    results = []
    keepalive, keepalive_event = None, None
    prev_params = pipe.all_gather(ag_stream, 1)
    for layer_id in range(2, pipe.layers + 1):
        if keepalive is not None:
            ag_stream.wait_event(keepalive_event)
            keepalive = None  # release the previous layer's block only now
        default.wait_stream(ag_stream)
        results.append((pipe.forward(prev_params, x), layer_id - 1))
        # Hold the block one more layer, so the next all-gather gets another.
        keepalive, keepalive_event = prev_params, default.record_event()
        prev_params = pipe.all_gather(ag_stream, layer_id)
    if keepalive is not None:
        ag_stream.wait_event(keepalive_event)
        keepalive = None
    default.wait_stream(ag_stream)
    results.append((pipe.forward(prev_params, x), pipe.layers))
    ag_stream.wait_event(default.record_event())
    del prev_params
    return max_error(pipe, results)


def run_resize(pipe: Pipeline, x: torch.Tensor) -> float:
    ag_stream = torch.cuda.Stream()
    default = torch.cuda.default_stream()
    results = []
    prev_params = pipe.all_gather(ag_stream, 1)
    for layer_id in range(2, pipe.layers + 1):
        default.wait_stream(ag_stream)
        results.append((pipe.forward(prev_params, x), layer_id - 1))
        # Frees the block while the tensor object lives on (FSDP-style).
        prev_params.untyped_storage().resize_(0)  # xsc: free resize
        prev_params = pipe.all_gather(ag_stream, layer_id)
    default.wait_stream(ag_stream)
    results.append((pipe.forward(prev_params, x), pipe.layers))
    ag_stream.wait_event(default.record_event())
    prev_params.untyped_storage().resize_(0)
    return max_error(pipe, results)


def run_view(pipe: Pipeline, x: torch.Tensor) -> float:
    # Same as buggy, but the consumer reads through a view that starts
    # pipe.view_offset elements into the block.
    ag_stream = torch.cuda.Stream()
    default = torch.cuda.default_stream()
    results = []
    prev_params = pipe.all_gather(ag_stream, 1)
    for layer_id in range(2, pipe.layers + 1):
        default.wait_stream(ag_stream)
        results.append((pipe.forward(prev_params, x), layer_id - 1))
        del prev_params  # xsc: free view
        prev_params = pipe.all_gather(ag_stream, layer_id)
    default.wait_stream(ag_stream)
    results.append((pipe.forward(prev_params, x), pipe.layers))
    ag_stream.wait_event(default.record_event())
    del prev_params
    return max_error(pipe, results)


def run_wait_after_del(pipe: Pipeline, x: torch.Tensor) -> float:
    # The wait is there but comes after the release: any allocation between
    # the two (a hook, another module) may receive the block unordered.
    ag_stream = torch.cuda.Stream()
    default = torch.cuda.default_stream()
    results = []
    prev_params = pipe.all_gather(ag_stream, 1)
    for layer_id in range(2, pipe.layers + 1):
        default.wait_stream(ag_stream)
        results.append((pipe.forward(prev_params, x), layer_id - 1))
        fwd_done = default.record_event()
        del prev_params  # xsc: free wait_after_del
        ag_stream.wait_event(fwd_done)  # xsc: late wait
        prev_params = pipe.all_gather(ag_stream, layer_id)
    default.wait_stream(ag_stream)
    results.append((pipe.forward(prev_params, x), pipe.layers))
    ag_stream.wait_event(default.record_event())
    del prev_params
    return max_error(pipe, results)


def run_two_consumers(pipe: Pipeline, x: torch.Tensor) -> float:
    # The default stream runs the matmul and a side stream takes the
    # parameters' maximum; the producer waits for the matmul only.
    ag_stream = torch.cuda.Stream()
    side = torch.cuda.Stream()
    default = torch.cuda.default_stream()
    results, peaks = [], []
    prev_params = pipe.all_gather(ag_stream, 1)
    for layer_id in range(2, pipe.layers + 1):
        default.wait_stream(ag_stream)
        side.wait_stream(ag_stream)
        results.append((pipe.forward(prev_params, x), layer_id - 1))
        with torch.cuda.stream(side):
            peaks.append((prev_params.amax(), layer_id - 1))  # xsc: second consumer
        ag_stream.wait_event(default.record_event())  # the side stream is forgotten
        del prev_params  # xsc: free two_consumers
        prev_params = pipe.all_gather(ag_stream, layer_id)
    default.wait_stream(ag_stream)
    results.append((pipe.forward(prev_params, x), pipe.layers))
    ag_stream.wait_event(default.record_event())
    del prev_params
    # The peaks were made on the side stream and are read on the default one
    # by max_error, which synchronizes the device before they are released.
    default.wait_stream(side)
    return max_error(pipe, results, peaks)


RUNNERS = {
    "buggy": ("BUGGY: no lifetime management", run_buggy),
    "record_stream": ("RECORD_STREAM: correct, allocator polls events", run_record_stream),
    "stall": ("STALL: wait_event before the release (correct, serialized)", run_stall),
    "keep_ref": ("PIPELINED: keep a reference + wait_event (correct)", run_keep_ref),
    "resize": ("RESIZE: storage resize_(0) with no ordering", run_resize),
    "view": ("VIEW: consumer reads a view at an offset, no ordering", run_view),
    "wait_after_del": ("WAIT_AFTER_DEL: wait_event enqueued after the release", run_wait_after_del),
    "two_consumers": ("TWO_CONSUMERS: only one of two consumer streams waited on",
                      run_two_consumers),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--mem-pool", action="store_true",
                        help="allocate in a torch.cuda.MemPool of the run's own")
    args = parser.parse_args(argv)
    if args.trials < 1 or args.layers < 2 or args.hidden < 16:
        parser.error("need --trials >= 1, --layers >= 2, --hidden >= 16")
    if not torch.cuda.is_available():
        print("pipelines.py: no CUDA device available", file=sys.stderr)
        return 2

    pipe = Pipeline(args.hidden, args.layers,
                    view_offset=args.hidden if args.mode == "view" else 0)
    label, runner = RUNNERS[args.mode]
    x = torch.ones(args.hidden, args.hidden, device="cuda")
    torch.cuda.synchronize()

    if args.mem_pool:
        pool = torch.cuda.MemPool()
        print(f"allocating from a MemPool {pool.id}")
    print(f"Config: HIDDEN={args.hidden}, LAYERS={args.layers}, TRIALS={args.trials}")
    print(f"=== {label} ===")
    corrupted = 0
    most_blocks = 0
    for trial in range(args.trials):
        pipe.block_ptrs.clear()
        if args.mem_pool:
            with torch.cuda.use_mem_pool(pool):
                error = runner(pipe, x)
        else:
            error = runner(pipe, x)
        most_blocks = max(most_blocks, len(set(pipe.block_ptrs)))
        if error > 1e-6:
            corrupted += 1
            if corrupted <= 3:
                print(f"  trial {trial:2d}: CORRUPT  max_diff={error:.1f}  (expected 0)")
    status = "PASS" if corrupted == 0 else "FAIL"
    print(f"  [{status}] {corrupted}/{args.trials} trials corrupted, "
          f"at most {most_blocks} param blocks per run ({args.layers} layers)")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
