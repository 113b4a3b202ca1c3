# A pipeline that hands per-batch context objects between its methods: a
# collective launched under the distribution stream returns awaitables,
# each awaitable's wait() gives partition contexts (made from that stream's
# pool), static helpers record their fields on the consumer stream, the
# contexts are stored in a per-batch object and read back by another method
# on the current stream. Each bug is followed by its fixed twin, which must
# stay silent.
from typing import Optional, cast

import torch


class BatchContext:
    def __init__(self):
        self.forward_parts = {}
        self.module_contexts = {}


class PipelineBase:
    def __init__(self, modules):
        self.dist_stream = torch.cuda.Stream()
        self.modules = modules

    def _start_distribution(self):
        self.dist_stream.wait_stream(torch.cuda.current_stream())


class PartitionPipeline(PipelineBase):
    def __init__(self, modules):
        super().__init__(modules)
        self.dist_done = torch.cuda.Event()

    # Only the dense half of each partition is recorded on the consumer
    # stream; the sparse half is not.
    @staticmethod
    def _record_part_dense_only(part, stream):
        part.dense.record_stream(stream)

    @staticmethod
    def _record_part(part, stream):
        part.dense.record_stream(stream)
        part.sparse.record_stream(stream)

    def _collect_unrecorded(self, results, consumer):
        parts = []
        for result in results:
            part, _ = result.wait()
            if part is not None:
                self._record_part_dense_only(part, consumer)
                parts.append(part)
        return parts

    def _collect(self, results, consumer):
        parts = []
        for result in results:
            part, _ = result.wait()
            if part is not None:
                self._record_part(part, consumer)
                parts.append(part)
        return parts

    def _distribute_unrecorded(self, into):
        consumer = torch.cuda.current_stream()
        self._start_distribution()
        with torch.cuda.stream(self.dist_stream):
            for name, module in self.modules.items():
                module.prepare(into)
                results = module.split_partitions(into.module_contexts.get(name))
                into.forward_parts[name] = self._collect_unrecorded(results, consumer)
            self.dist_done.record(self.dist_stream)

    def _distribute(self, into):
        consumer = torch.cuda.current_stream()
        self._start_distribution()
        with torch.cuda.stream(self.dist_stream):
            for name, module in self.modules.items():
                module.prepare(into)
                results = module.split_partitions(into.module_contexts.get(name))
                into.forward_parts[name] = self._collect(results, consumer)
            self.dist_done.record(self.dist_stream)

    def _compute(self, batch_ctx):
        for name, module in self.modules.items():
            parts = batch_ctx.forward_parts[name]
            batch_ctx.outputs = module.lookup([p.sparse for p in parts], [p.dense for p in parts],
                                              [p.splits for p in parts])

    # The next batch's partitions are made on the distribution stream and
    # used here on the current stream; the sparse halves were never
    # recorded on it.
    def step_unrecorded(self, queue):
        nxt: Optional[BatchContext] = cast(BatchContext, queue[1]) if len(queue) > 1 else None
        self._distribute_unrecorded(nxt)
        if nxt is not None:
            torch.cuda.current_stream().wait_event(self.dist_done)
            self._compute(nxt)  # CHECK: [[@LINE]]:13: warning: 'result.wait()[0].sparse' is used on the current stream here and is still held when 'step_unrecorded' returns, with nothing ordering stream 'self.dist_stream' (where it was allocated) after this use{{.*}}[xstream-pending-at-return]

    def step(self, queue):
        nxt: Optional[BatchContext] = cast(BatchContext, queue[1]) if len(queue) > 1 else None
        self._distribute(nxt)
        if nxt is not None:
            torch.cuda.current_stream().wait_event(self.dist_done)
            self._compute(nxt)


class LookupStage(PipelineBase):
    """Inputs fetched on the distribution stream are kept in the batch's
    object by one method and looked up on the current stream by another,
    which names no stream: it is followed because it is handed the object
    the inputs were stored in."""

    def _fetch_unrecorded(self, batch_ctx):
        self._start_distribution()
        with torch.cuda.stream(self.dist_stream):
            for name, module in self.modules.items():
                batch_ctx.inputs[name] = module.fetch(name).wait()

    def _fetch(self, batch_ctx):
        consumer = torch.cuda.current_stream()
        self._start_distribution()
        with torch.cuda.stream(self.dist_stream):
            for name, module in self.modules.items():
                fetched = module.fetch(name).wait()
                fetched.record_stream(consumer)
                batch_ctx.inputs[name] = fetched

    def _look_up(self, batch_ctx):
        for name, module in self.modules.items():
            batch_ctx.outputs[name] = module.lookup(batch_ctx.inputs[name])

    def step_unrecorded(self, batch_ctx):
        self._fetch_unrecorded(batch_ctx)
        torch.cuda.current_stream().wait_stream(self.dist_stream)
        self._look_up(batch_ctx)  # CHECK: [[@LINE]]:9: warning: '{{.*}}fetch(name).wait()' is used on the current stream here and is still held when 'step_unrecorded' returns{{.*}}[xstream-pending-at-return]

    def step(self, batch_ctx):
        self._fetch(batch_ctx)
        torch.cuda.current_stream().wait_stream(self.dist_stream)
        self._look_up(batch_ctx)


class ModuleContextReader:
    """A helper reads a module context the distribution stream filled, after
    a wait its caller made: the context stays in its container, whose owner
    hands it over (and records it) later. Silent."""

    def __init__(self, modules):
        self.dist_stream = torch.cuda.Stream()
        self.modules = modules

    def _peek(self, batch_ctx, name):
        return batch_ctx.module_contexts[name]

    def _estimate(self, batch_ctx):
        for name, module in self.modules.items():
            batch_ctx.estimates[name] = module.estimate(self._peek(batch_ctx, name), batch_ctx.scale)

    def start(self, batch_ctx, batch):
        self.dist_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.dist_stream):
            for name, module in self.modules.items():
                batch_ctx.module_contexts[name] = module.input_dist(batch)

    def step(self, batch_ctx):
        torch.cuda.current_stream().wait_stream(self.dist_stream)
        batch_ctx.scale = torch.ones(1, device="cuda")
        self._estimate(batch_ctx)


class Receiver:
    """What an unknown call given arguments returns while the communication
    stream is current (objects received over a collective) may be one of
    its arguments, or memory of the library's own: no tensor of its own.
    Silent."""

    def __init__(self, receive_objects, model):
        self.comm_stream = torch.cuda.Stream()
        self.receive_objects = receive_objects
        self.model = model

    def receive(self, host_meta):
        with torch.cuda.stream(self.comm_stream):
            first, rest = self.receive_objects(host_meta)
        torch.cuda.current_stream().wait_stream(self.comm_stream)
        self.model(first)
        return first, rest


def pinned_size(n):
    """A pinned host buffer's size, read on the host: its metadata, not its
    elements, so no copy into it needs to be done first. Silent."""
    host = torch.empty(n, device="cpu").pin_memory()
    side = torch.cuda.Stream()
    dev = torch.ones(n, device="cuda")
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        host.copy_(dev, non_blocking=True)
    nbytes = host.element_size() * host.nelement()
    side.synchronize()
    return host, nbytes
