"""torchao's CPUOffloadOptimizer with one of its orderings removed.

    python3 torchao_sync_dropped.py stream-wait|event-sync|step-sync [options]

(the options are torchao_cpu_offload.py's)

examples/torch/real/torchao_cpu_offload.py, unchanged, with one call of
the optimizer's ordering made to return at once, for the optimizer's own
stream and events only (nothing else in the process is touched):

stream-wait  the gradient hook's stream.wait_stream(current_stream()):
             the copy of each gradient to the host, on the optimizer's
             stream, may read the gradient before the default stream's
             backward has written it: uses before ready.
event-sync   step()'s synchronize() of each gradient copy's event: AdamW
             on the host reads the pinned gradient buffers while the
             copies into them may still run.
step-sync    step()'s final stream.synchronize(): the next forward on the
             default stream reads parameters that the optimizer's stream
             may not have copied back yet: uses before ready.

The program checks that torchao's code still has the shape the patch
relies on and exits 3 with a message when it does not or when the
removed call never came.
"""
import inspect
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "real"))

import torch  # noqa: E402

import torchao_cpu_offload  # noqa: E402

# What each mutant removes, and the line of CPUOffloadOptimizer that makes it.
REMOVED = {
    "stream-wait": r"self\.stream\.wait_stream\(",
    "event-sync": r"grad_d2h_event\.synchronize\(\)",
    "step-sync": r"self\.stream\.synchronize\(\)",
}
skipped = 0


def shape_error(message: str) -> None:
    import torchao
    print(f"torchao_sync_dropped.py: torchao {torchao.__version__} differs from what this "
          f"program patches: {message}", file=sys.stderr, flush=True)
    sys.exit(3)


def patch(which: str) -> None:
    from torchao.optim import cpu_offload

    optimizer_class = cpu_offload.CPUOffloadOptimizer
    if not re.search(REMOVED[which], inspect.getsource(optimizer_class)):
        shape_error(f"CPUOffloadOptimizer no longer calls {REMOVED[which]}")
    optimizers = []
    original_init = optimizer_class.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        optimizers.append(self)

    optimizer_class.__init__ = init

    def own_stream(stream) -> bool:
        return any(stream is optimizer.stream for optimizer in optimizers)

    def own_event(event) -> bool:
        return any(event in optimizer.queue.values() for optimizer in optimizers)

    def skipping(original, own):
        def call(self, *args, **kwargs):
            global skipped
            if own(self):
                skipped += 1
                return None
            return original(self, *args, **kwargs)
        return call

    if which == "stream-wait":
        torch.cuda.Stream.wait_stream = skipping(torch.cuda.Stream.wait_stream, own_stream)
    elif which == "event-sync":
        torch.cuda.Event.synchronize = skipping(torch.cuda.Event.synchronize, own_event)
    else:
        torch.cuda.Stream.synchronize = skipping(torch.cuda.Stream.synchronize, own_stream)


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in REMOVED:
        print("usage: torchao_sync_dropped.py stream-wait|event-sync|step-sync "
              "[torchao_cpu_offload.py options]", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torchao_sync_dropped.py: no CUDA device available", file=sys.stderr)
        return 2
    patch(sys.argv[1])
    status = torchao_cpu_offload.main(sys.argv[2:])
    if skipped == 0:
        shape_error(f"CPUOffloadOptimizer never made the call {REMOVED[sys.argv[1]]}")
    return status


if __name__ == "__main__":
    sys.exit(main())
