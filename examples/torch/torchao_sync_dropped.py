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
import sys

import torch

import library_mutant  # puts examples/torch/real on the path
from library_mutant import SkippedCalls

import torchao_cpu_offload

PROGRAM = "torchao_sync_dropped.py"
# What each mutant removes, and the line of CPUOffloadOptimizer that makes it.
REMOVED = {
    "stream-wait": r"self\.stream\.wait_stream\(",
    "event-sync": r"grad_d2h_event\.synchronize\(\)",
    "step-sync": r"self\.stream\.synchronize\(\)",
}


def patch(which: str) -> SkippedCalls:
    from torchao.optim import cpu_offload

    optimizer_class = cpu_offload.CPUOffloadOptimizer
    library_mutant.require_call(PROGRAM, "torchao", optimizer_class, REMOVED[which])
    optimizers = library_mutant.instances_of(optimizer_class)

    def own_stream(stream, *args) -> bool:
        return any(stream is optimizer.stream for optimizer in optimizers)

    def own_event(event, *args) -> bool:
        return any(event in optimizer.queue.values() for optimizer in optimizers)

    skipped = SkippedCalls()
    if which == "stream-wait":
        torch.cuda.Stream.wait_stream = skipped.skipping(torch.cuda.Stream.wait_stream, own_stream)
    elif which == "event-sync":
        torch.cuda.Event.synchronize = skipped.skipping(torch.cuda.Event.synchronize, own_event)
    else:
        torch.cuda.Stream.synchronize = skipped.skipping(torch.cuda.Stream.synchronize, own_stream)
    return skipped


def main() -> int:
    return library_mutant.run(PROGRAM, "torchao", REMOVED, patch, torchao_cpu_offload.main,
                              lambda which: f"of CPUOffloadOptimizer {REMOVED[which]}")


if __name__ == "__main__":
    sys.exit(main())
