# A helper copies the caller's device tensors to pinned host memory on a
# side stream and hands back the copies with an event recorded after them:
# the caller may wait on that event before it drops its tensors. A method
# that waits on the event only in a callback a future runs later, and
# returns at once, leaves the caller free to drop the tensors under the copy
# (the callback keeps the event, not the tensors). Its callers are found
# through self only: the method is named like a dict's (`update`), and
# `d.update(...)` elsewhere is a dict's. A call of it followed by a return
# is not followed by what comes after that return (but a finally's wait
# runs after it). An event of the object recorded in place is kept by the
# object. A stream a callable handed in returns may be the current one.
# Each bug is followed by its fixed twin, which must stay silent.
import torch

COPY_STREAM = torch.cuda.Stream()


def copy_to_host(tensors):
    # What is not on the device is handed back as it is: kept, on that path.
    COPY_STREAM.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(COPY_STREAM):
        copies = {}
        for name, value in tensors.items():
            if not value.is_cuda:
                copies[name] = value
                continue
            host = torch.empty(value.shape, dtype=value.dtype, device="cpu", pin_memory=True)
            host.copy_(value, non_blocking=True)
            copies[name] = host
        done = torch.cuda.Event()
        done.record()
    return copies, done


def copy_to_host_recorded(tensors):
    COPY_STREAM.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(COPY_STREAM):
        copies = {}
        for name, value in tensors.items():
            host = torch.empty(value.shape, dtype=value.dtype, device="cpu", pin_memory=True)
            host.copy_(value, non_blocking=True)
            value.record_stream(COPY_STREAM)
            copies[name] = host
        done = torch.cuda.Event()
        done.record()
    return copies, done


class PendingMetrics:
    def __init__(self, future):
        self.future = future
        self.data = {}

    def update(self, other):
        if isinstance(other, PendingMetrics):
            self.update(other.data)
            return
        copies, done = copy_to_host(other)  # CHECK: [[@LINE]]:24: warning: 'other[*]' is used on stream 'COPY_STREAM' here and is still held when 'update' returns{{.*}}[xstream-pending-at-return]
        if self.future is None:
            done.synchronize()
            self.data.update(copies)
        else:
            def merge(finished):
                done.synchronize()
                self.data.update(copies)
            self.future.add_done_callback(merge)


class PendingMetricsRecorded:
    def __init__(self, future):
        self.future = future
        self.data = {}

    def update(self, other):
        if isinstance(other, PendingMetricsRecorded):
            self.update(other.data)
            return
        copies, done = copy_to_host_recorded(other)
        if self.future is None:
            done.synchronize()
            self.data.update(copies)
        else:
            def merge(finished):
                done.synchronize()
                self.data.update(copies)
            self.future.add_done_callback(merge)


class PendingMetricsWaited:
    # The host waits for the copies before the method returns.
    def __init__(self):
        self.data = {}

    def update(self, other):
        copies, done = copy_to_host(other)
        done.synchronize()
        self.data.update(copies)


def merge_all(metrics, batches):
    # Dicts' update calls, each followed by a host wait: not calls of the
    # methods above.
    merged = {}
    for batch in batches:
        merged.update(batch)
        torch.cuda.synchronize()
    return merged


class PendingMetricsKeptEvent:
    # The object keeps the event (recorded in place) and waits on it before
    # anything reads the copies; the caller keeps its tensors until then.
    def __init__(self):
        self.done = torch.cuda.Event()
        self.copies = {}

    def stage(self, other):
        COPY_STREAM.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(COPY_STREAM):
            for name, value in other.items():
                host = torch.empty(value.shape, dtype=value.dtype, device="cpu", pin_memory=True)
                host.copy_(value, non_blocking=True)
                self.copies[name] = host
        self.done.record(COPY_STREAM)

    def resolve(self):
        self.done.synchronize()
        return self.copies


class Scaler:
    # Scales the caller's tensor in place on a side stream and leaves the
    # ordering to its callers.
    def __init__(self):
        self.side = torch.cuda.Stream()

    def scale_pending(self, t):
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            t.mul_(2)  # CHECK: [[@LINE]]:13: warning: 't' is used on stream 'self.side' here and is still held when 'scale_pending' returns{{.*}}[xstream-pending-at-return]


def scale_early_return(scaler, t, first):
    # Its one caller synchronizes only on the path that did not call it.
    if first:
        scaler.scale_pending(t)
        return t
    torch.cuda.synchronize()
    return t


class ScalerOrdered:
    def __init__(self):
        self.side = torch.cuda.Stream()

    def scale_then_sync(self, t):
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            t.mul_(2)


def scale_in_try(scaler, t):
    # The finally runs after the return: the host waits for the scaling.
    try:
        scaler.scale_then_sync(t)
        return t
    finally:
        torch.cuda.synchronize()


# A stream a callable handed in returns may be the current stream (a
# default factory's is `torch.cuda.current_stream`): what runs on it is not
# known to race with the current stream. One a function of the module makes
# is a side stream.
def new_side_stream():
    return torch.cuda.Stream()


def scale_on_made_stream(t):
    with torch.cuda.stream(new_side_stream()):
        t.mul_(2)  # CHECK: [[@LINE]]:9: warning: 't' is used on the stream made at line {{[0-9]+}} here and is still held when 'scale_on_made_stream' returns{{.*}}[xstream-pending-at-return]


def scale_on_factory_stream(t, stream_factory):
    with torch.cuda.stream(stream_factory()):
        t.mul_(2)
