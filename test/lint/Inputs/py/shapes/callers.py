# What a method leaves pending when it returns is judged at its callers
# when one of them orders the streams after the call; only an ordering every
# path takes counts. And what an object does elsewhere: a constructor that
# only keeps what it is given runs nothing on it, an object that makes the
# current stream wait for its stream elsewhere orders what that stream used,
# and one that synchronizes the device orders every stream it owns. Each bug
# is followed by its fixed twin, which must stay silent.
import torch


class LookupPipeline:
    """Lookups wait for their input on the distribution stream and run on
    the current stream; the context keeps the input."""

    def __init__(self):
        self.dist_stream = torch.cuda.Stream()
        self.dist_event = torch.cuda.Event()

    def _lookup(self, context, module, cur):
        with torch.cuda.stream(self.dist_stream):
            kjt = context.requests.pop(module.name).wait()
        self.dist_event.record(self.dist_stream)
        cur.wait_event(self.dist_event)
        context.outputs[module.name] = module.lookup(kjt)

    # Each step orders something after the lookup (the current stream
    # waits for the distribution stream again, which is not the order the
    # lookup's input needs), so the lookup is judged in the step.

    # Its driver synchronizes only when asked to: the step is judged here.
    def step_flagged(self, context, module):
        cur = torch.cuda.current_stream()
        self._lookup(context, module, cur)  # CHECK: [[@LINE]]:9: warning: 'context.requests.pop(module.name).wait()' is used on the current stream here and is still held when 'step_flagged' returns{{.*}}[xstream-pending-at-return]
        cur.wait_stream(self.dist_stream)

    # Its driver synchronizes after every call: judged there, where the
    # order is.
    def step_synced(self, context, module):
        cur = torch.cuda.current_stream()
        self._lookup(context, module, cur)
        cur.wait_stream(self.dist_stream)

    # Its driver waits on the event it got, whenever there is one.
    def step_evented(self, context, module):
        cur = torch.cuda.current_stream()
        self._lookup(context, module, cur)
        cur.wait_stream(self.dist_stream)


def drive_flagged(pipeline, contexts, module, opts):
    for context in contexts:
        pipeline.step_flagged(context, module)
        if opts.sync_every_step:
            torch.cuda.synchronize()


def drive_synced(pipeline, contexts, module):
    for context in contexts:
        pipeline.step_synced(context, module)
        torch.cuda.synchronize()


def drive_evented(pipeline, contexts, module, event):
    for context in contexts:
        pipeline.step_evented(context, module)
        if event is not None:
            event.synchronize()


class Bookkeeping:
    """Made around a batch: keeps it and runs nothing on it."""

    def __init__(self, batch, step):
        self.batch = batch
        self.step = step


class HostSnapshot:
    """Made around a batch: copies it to the host on the current stream."""

    def __init__(self, batch):
        self.host = torch.empty(batch.shape, dtype=batch.dtype, device="cpu", pin_memory=True)
        self.host.copy_(batch, non_blocking=True)


class PrefetchingLoader:
    def __init__(self):
        self.copy_stream = torch.cuda.Stream()
        self.batch = None
        self.history = []

    def prefetch(self, host_batch):
        with torch.cuda.stream(self.copy_stream):
            self.batch = host_batch.to("cuda", non_blocking=True)

    # The host copy reads the batch on the current stream, and the next
    # prefetch drops it on the copy stream's pool.
    def snapshot_unrecorded(self):
        torch.cuda.current_stream().wait_stream(self.copy_stream)
        self.history.append(HostSnapshot(self.batch))  # CHECK: [[@LINE]]:29: warning: 'self.batch' is used on the current stream here and is still held when 'snapshot_unrecorded' returns{{.*}}[xstream-pending-at-return]

    def snapshot_recorded(self):
        torch.cuda.current_stream().wait_stream(self.copy_stream)
        self.history.append(HostSnapshot(self.batch))
        self.batch.record_stream(torch.cuda.current_stream())

    # Only kept: no kernel reads it here.
    def keep_for_logging(self, step):
        torch.cuda.current_stream().wait_stream(self.copy_stream)
        self.history.append(Bookkeeping(self.batch, step))


def wait_for_copy(batch, stream):
    torch.cuda.current_stream().wait_stream(stream)
    batch.record_stream(torch.cuda.current_stream())


class InPlaceCopier:
    """Destinations are made from the current stream's pool and filled on
    the copy stream."""

    def __init__(self):
        self.copy_stream = torch.cuda.Stream()
        self.batches = []

    def enqueue_unwaited(self, host_batch):
        dest = torch.empty_like(host_batch, device="cuda")
        self.copy_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.copy_stream):
            dest.copy_(host_batch, non_blocking=True)  # CHECK: [[@LINE]]:13: warning: 'dest' is used on stream 'self.copy_stream' here and is still held when 'enqueue_unwaited' returns, with nothing ordering the current stream (where it was allocated) after this use{{.*}}[xstream-pending-at-return]
        self.batches.append(dest)


class InPlaceCopierWaited:
    """The same, and the consuming method hands the copy stream to a helper
    that makes the current stream wait for it before the batch is used and
    dropped."""

    def __init__(self):
        self.copy_stream = torch.cuda.Stream()
        self.batches = []

    def enqueue(self, host_batch):
        dest = torch.empty_like(host_batch, device="cuda")
        self.copy_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.copy_stream):
            dest.copy_(host_batch, non_blocking=True)
        self.batches.append(dest)

    def consume(self, model):
        wait_for_copy(self.batches[0], self.copy_stream)
        out = model(self.batches[0])
        self.batches.pop(0)
        return out


class GradientBucket:
    def __init__(self):
        self.reduce_stream = torch.cuda.Stream()
        self.partition = None

    # The reduced partition is written on the reduce stream and kept; the
    # optimizer reads it later on the current stream.
    def reduce_unsynchronized(self, flat):
        self.reduce_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.reduce_stream):
            self.partition = flat * 0.5  # CHECK: [[@LINE]]:30: warning: 'self.partition' is written on stream 'self.reduce_stream' here and handed back when 'reduce_unsynchronized' returns{{.*}}[xstream-pending-at-return]


class GradientBucketSynchronized:
    """The same, and the object synchronizes the device before its
    optimizer step reads the partition."""

    def __init__(self):
        self.reduce_stream = torch.cuda.Stream()
        self.partition = None

    def reduce(self, flat):
        self.reduce_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.reduce_stream):
            self.partition = flat * 0.5

    def epilogue(self):
        torch.cuda.synchronize()


class LookupOnItsOwnStream:
    """Inputs the distribution stream made are looked up on the lookup
    stream; another method makes the current stream wait for the lookup
    stream, but the distribution stream, whose pool the inputs go back to,
    waits for nothing in this class."""

    def __init__(self):
        self.dist_stream = torch.cuda.Stream()
        self.lookup_stream = torch.cuda.Stream()

    def lookup_unrecorded(self, context, module):
        with torch.cuda.stream(self.dist_stream):
            kjt = context.requests.pop(module.name).wait()
        with torch.cuda.stream(self.lookup_stream):
            context.outputs[module.name] = module.lookup(kjt)  # CHECK: [[@LINE]]:44: warning: 'kjt' is used on stream 'self.lookup_stream' here and is still held when 'lookup_unrecorded' returns{{.*}}[xstream-pending-at-return]

    def wait_lookups(self):
        torch.cuda.current_stream().wait_stream(self.lookup_stream)


class LookupOnItsOwnStreamOrdered(LookupOnItsOwnStream):
    """The same, and the class makes the distribution stream wait for the
    lookup stream before it distributes the next batch: silent."""

    def lookup(self, context, module):
        with torch.cuda.stream(self.dist_stream):
            kjt = context.requests.pop(module.name).wait()
        with torch.cuda.stream(self.lookup_stream):
            context.outputs[module.name] = module.lookup(kjt)

    def next_batch(self):
        self.dist_stream.wait_stream(self.lookup_stream)


class GraphWarmup:
    """Warms a module up on a fresh stream before capturing it: the warm-up
    reads the caller's inputs there, which that stream must wait for."""

    def forward(self, *inputs):
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            out = self.module(*inputs)  # CHECK: [[@LINE]]:19: warning: 'inputs' is used on stream 'side' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
        torch.cuda.current_stream().wait_stream(side)
        return out


class StagedRunner:
    """Another class's forward that synchronizes before `super().forward()`:
    that call runs its own base's forward, not GraphWarmup's, so it does not
    make GraphWarmup's right."""

    def run_stage(self, batch):
        torch.cuda.synchronize()
        return super().forward(batch)


class SubclassedWarmup:
    """The same warm-up, and a subclass that synchronizes before calling it
    through `super()`: that caller orders what the warm-up reads (silent)."""

    def forward(self, *inputs):
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            out = self.module(*inputs)
        torch.cuda.current_stream().wait_stream(side)
        return out


class SyncedWarmup(SubclassedWarmup):
    def forward(self, *inputs):
        torch.cuda.synchronize()
        return super().forward(*inputs)
