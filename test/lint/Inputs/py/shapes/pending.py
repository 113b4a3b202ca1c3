# Tensors a function hands back with a use still pending on a stream it
# names itself: the caller's tensor, or one it stored where it outlives the
# call. Whoever frees it later frees it on its allocation stream while that
# use may still run. Each bug is followed by its fixed twin, which must stay
# silent; the expectations sit next to the lines they are about.
import torch

OFFLOAD_STREAM = torch.cuda.Stream()


class GradReducer:
    def __init__(self):
        self.reduce_stream = torch.cuda.Stream()

    # The caller's gradient is scaled on the reduce stream; the caller frees
    # it later (zero_grad) on the current stream.
    def scale_grads_unrecorded(self, grads):
        with torch.cuda.stream(self.reduce_stream):
            for g in grads:
                g.mul_(0.5)  # CHECK: [[@LINE]]:17: warning: 'grads[*]' is used on stream 'self.reduce_stream' here and is still held when 'scale_grads_unrecorded' returns{{.*}}[xstream-pending-at-return]

    def scale_grads_recorded(self, grads):
        with torch.cuda.stream(self.reduce_stream):
            for g in grads:
                g.mul_(0.5)
                g.record_stream(self.reduce_stream)


class WaitingReducer:
    """The same use, and the object makes the current stream wait for its
    stream in another method (before the step goes on): silent."""

    def __init__(self):
        self.reduce_stream = torch.cuda.Stream()

    def scale_grads(self, grads):
        with torch.cuda.stream(self.reduce_stream):
            for g in grads:
                g.mul_(0.5)

    def finish(self):
        torch.cuda.current_stream().wait_stream(self.reduce_stream)


class Reloader:
    def __init__(self):
        self.copy_stream = torch.cuda.Stream()
        self.state = {}

    # A buffer made here, filled on the copy stream and stored in the state:
    # its later free on the current stream runs over the copy.
    def reload_unrecorded(self, key, host):
        buf = torch.empty_like(host, device="cuda"); self.copy_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.copy_stream):
            buf.copy_(host)  # CHECK: [[@LINE]]:13: warning: 'buf' is used on stream 'self.copy_stream' here and is still held when 'reload_unrecorded' returns, with nothing ordering the current stream (where it was allocated) after this use{{.*}}[xstream-pending-at-return]
        self.state[key] = buf

    def reload_recorded(self, key, host):
        buf = torch.empty_like(host, device="cuda"); self.copy_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.copy_stream):
            buf.copy_(host)
        buf.record_stream(self.copy_stream)
        self.state[key] = buf

    # Kept with an event recorded after the use: whoever frees it can wait
    # on the event first (the keepalive form).
    def reload_with_event(self, key, host):
        buf = torch.empty_like(host, device="cuda"); self.copy_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.copy_stream):
            buf.copy_(host)
            done = torch.cuda.Event()
            done.record()
        self.state[key] = (buf, done)


class Prefetcher:
    def __init__(self):
        self.copy_stream = torch.cuda.Stream()
        self.state = {}

    # Made on the copy stream, used on the current one, kept: its free on the
    # current stream returns the block to the copy stream's pool while the
    # current stream may still read it.
    def prefetch_unrecorded(self, weight):
        with torch.cuda.stream(self.copy_stream):
            staged = weight.to("cuda", non_blocking=True)
        torch.cuda.current_stream().wait_stream(self.copy_stream)
        out = staged.sum(0)  # CHECK: [[@LINE]]:15: warning: 'staged' is used on the current stream here and is still held when 'prefetch_unrecorded' returns, with nothing ordering stream 'self.copy_stream' (where it was allocated) after this use{{.*}}[xstream-pending-at-return]
        self.state["staged"] = staged
        return out

    def prefetch_recorded(self, weight):
        with torch.cuda.stream(self.copy_stream):
            staged = weight.to("cuda", non_blocking=True)
        torch.cuda.current_stream().wait_stream(self.copy_stream)
        out = staged.sum(0)
        staged.record_stream(torch.cuda.current_stream())
        self.state["staged"] = staged
        return out


# An unknown call's result made under a stream context of the code's own
# (`with stream_context(s)`) comes from that stream's pool; used on the
# current stream and kept, it needs record_stream of the current stream.
def fetch_dist_unrecorded(request, stream_context, dist_stream, sink):
    with stream_context(dist_stream):
        data = request.wait()
    torch.cuda.current_stream().wait_stream(dist_stream)
    sink.consume(data)  # CHECK: [[@LINE]]:5: warning: 'data' is used on the current stream here and is still held when 'fetch_dist_unrecorded' returns{{.*}}[xstream-pending-at-return]
    return data


def fetch_dist_recorded(request, stream_context, dist_stream, sink):
    with stream_context(dist_stream):
        data = request.wait()
    torch.cuda.current_stream().wait_stream(dist_stream)
    data.record_stream(torch.cuda.current_stream())
    sink.consume(data)
    return data


# A module-level stream: the caller's tensor is cast there and left pending.
def offload_cast_unrecorded(t):
    with torch.cuda.stream(OFFLOAD_STREAM):
        t.clamp_(0, 1)  # CHECK: [[@LINE]]:9: warning: 't' is used on stream 'OFFLOAD_STREAM' here{{.*}}[xstream-pending-at-return]


# The same helper shape, judged at its caller, which orders after the call.
def offload_cast_for_caller(t):
    with torch.cuda.stream(OFFLOAD_STREAM):
        t.clamp_(0, 1)


def caller_waits_after(t):
    offload_cast_for_caller(t)
    torch.cuda.current_stream().wait_stream(OFFLOAD_STREAM)


# A stream passed in may be the caller's current stream: not judged here.
def cast_on_given_stream(t, stream):
    with torch.cuda.stream(stream):
        t.clamp_(0, 1)


# A non_blocking copy of the caller's tensor: one side is pinned host memory,
# which PyTorch's host allocator keeps until the copy is done.
def upload_given(dst, src):
    with torch.cuda.stream(OFFLOAD_STREAM):
        dst.copy_(src, non_blocking=True)


# A method is judged at its callers when one orders after the call; a call
# of the same name whose arguments cannot bind to its parameters calls
# another class's method (`self.inner.stage(ctx, data)`), and the ordering
# after it says nothing of this one.
class StagedCast:
    def __init__(self):
        self.cast_stream = torch.cuda.Stream()

    def stage(self, t):
        with torch.cuda.stream(self.cast_stream):
            t.clamp_(0, 1)  # CHECK: [[@LINE]]:13: warning: 't' is used on stream 'self.cast_stream' here{{.*}}[xstream-pending-at-return]


class StagedCastOrdered:
    def __init__(self):
        self.cast_stream = torch.cuda.Stream()

    def stage_ordered(self, t):
        with torch.cuda.stream(self.cast_stream):
            t.clamp_(0, 1)


class StageRunner:
    def __init__(self, inner, ordered):
        self.inner = inner
        self.ordered = ordered

    def run_inner(self, ctx, data):
        self.inner.stage(ctx, data)
        torch.cuda.current_stream().wait_stream(self.inner.cast_stream)

    def run_ordered(self, t):
        self.ordered.stage_ordered(t)
        torch.cuda.current_stream().wait_stream(self.ordered.cast_stream)


# A wait on the other branch of an if around the call orders nothing the
# call did: the helper is judged on its own.
def offload_clamp(t):
    with torch.cuda.stream(OFFLOAD_STREAM):
        t.clamp_(0, 1)  # CHECK: [[@LINE]]:9: warning: 't' is used on stream 'OFFLOAD_STREAM' here{{.*}}[xstream-pending-at-return]


def clamp_or_wait(t, offload):
    if offload:
        offload_clamp(t)  # CHECK: [[@LINE]]:9: warning: 't' is used on stream 'OFFLOAD_STREAM' here and is still held when 'clamp_or_wait' returns{{.*}}[xstream-pending-at-return]
    else:
        torch.cuda.current_stream().wait_stream(OFFLOAD_STREAM)


# The caller's activation is copied to the host on a side stream and kept,
# with an event, only while a window of them is kept; with no window the
# caller drops it at once, under the copy. The object waits for that event
# later, which covers only what it keeps.
class OffloadWindowUnrecorded:
    def __init__(self, window):
        self.compute = torch.cuda.current_stream()
        self.mover = torch.cuda.Stream()
        self.window = window
        self.kept = {}
        self.on_host = {}

    def offload(self, key, activation):
        self.mover.wait_stream(self.compute)
        with torch.cuda.stream(self.mover):
            host = torch.empty_like(activation, device="cpu", pin_memory=True)
            host.copy_(activation, non_blocking=True)  # CHECK: [[@LINE]]:13: warning: 'activation' is used on stream 'self.mover' here and is still held when 'offload' returns{{.*}}[xstream-pending-at-return]
        self.on_host[key] = host
        if self.window > 0:
            self.kept[key] = (activation, self.mover.record_event())

    def restore(self, key):
        if key in self.kept:
            activation, copied = self.kept.pop(key)
            self.compute.wait_event(copied)
            return activation
        return self.on_host.pop(key).to("cuda")


class OffloadWindowRecorded:
    def __init__(self, window):
        self.compute = torch.cuda.current_stream()
        self.mover = torch.cuda.Stream()
        self.window = window
        self.kept = {}
        self.on_host = {}

    def offload(self, key, activation):
        self.mover.wait_stream(self.compute)
        with torch.cuda.stream(self.mover):
            host = torch.empty_like(activation, device="cpu", pin_memory=True)
            host.copy_(activation, non_blocking=True)
        self.on_host[key] = host
        activation.record_stream(self.mover)
        if self.window > 0:
            self.kept[key] = (activation, self.mover.record_event())

    def restore(self, key):
        if key in self.kept:
            activation, copied = self.kept.pop(key)
            self.compute.wait_event(copied)
            return activation
        return self.on_host.pop(key).to("cuda")


class OffloadAlwaysKept:
    # Kept on every path: the object's later wait covers it.
    def __init__(self):
        self.compute = torch.cuda.current_stream()
        self.mover = torch.cuda.Stream()
        self.kept = {}
        self.on_host = {}

    def offload(self, key, activation):
        self.mover.wait_stream(self.compute)
        with torch.cuda.stream(self.mover):
            host = torch.empty_like(activation, device="cpu", pin_memory=True)
            host.copy_(activation, non_blocking=True)
        self.on_host[key] = host
        self.kept[key] = (activation, self.mover.record_event())

    def restore(self, key):
        activation, copied = self.kept.pop(key)
        self.compute.wait_event(copied)
        return activation
