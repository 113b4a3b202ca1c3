# An object's state from one call to the next, what the caller wrote before a
# function started, an unknown call's result, a stream that may be None and a
# stream context kept in a name. Each bug is followed by its fixed twin,
# which must stay silent.
from collections import deque
from contextlib import contextmanager, nullcontext
from typing import cast

import torch


class BatchQueueUnrecorded:
    """A batch copied under the memcpy stream in one method, read on the
    current stream and popped in another: nothing keeps its block from the
    memcpy stream's next copy."""

    def __init__(self, model):
        self._model = model
        self._memcpy_stream = torch.cuda.Stream()
        self.batches = deque()

    def enqueue_batch(self, it):
        with torch.cuda.stream(self._memcpy_stream):
            batch = cast(torch.Tensor, next(it).to("cuda", non_blocking=True))
        self.batches.append(batch)

    def progress(self, it):
        self.enqueue_batch(it)
        torch.cuda.current_stream().wait_stream(self._memcpy_stream)
        out = self._model(self.batches[0])
        self.batches.popleft()  # CHECK: [[@LINE]]:9: warning: 'self.batches[0]' is freed by this pop on stream 'self._memcpy_stream' while the current stream may still be using it{{.*}}[xstream-unordered-free]
        return out


class BatchQueueRecorded:
    def __init__(self, model):
        self._model = model
        self._memcpy_stream = torch.cuda.Stream()
        self.batches = deque()

    def enqueue_batch(self, it):
        with torch.cuda.stream(self._memcpy_stream):
            batch = cast(torch.Tensor, next(it).to("cuda", non_blocking=True))
        self.batches.append(batch)

    def progress(self, it):
        self.enqueue_batch(it)
        torch.cuda.current_stream().wait_stream(self._memcpy_stream)
        self.batches[0].record_stream(torch.cuda.current_stream())
        out = self._model(self.batches[0])
        self.batches.popleft()
        return out


class BatchQueueUnwaited:
    """The batch is read before the current stream waits for its copy."""

    def __init__(self, model):
        self._model = model
        self._memcpy_stream = torch.cuda.Stream()
        self.batches = deque()

    def enqueue_batch(self, it):
        with torch.cuda.stream(self._memcpy_stream):
            batch = next(it).to("cuda", non_blocking=True)
        self.batches.append(batch)

    def step(self):
        self.batches[0].record_stream(torch.cuda.current_stream())
        return self._model(self.batches[0])  # CHECK: [[@LINE]]:16: warning: 'self.batches[0]' is used on the current stream before its write on stream 'self._memcpy_stream' is ordered before this use{{.*}}[xstream-use-before-ready]


class BatchQueueWaited:
    def __init__(self, model):
        self._model = model
        self._memcpy_stream = torch.cuda.Stream()
        self.batches = deque()

    def enqueue_batch(self, it):
        with torch.cuda.stream(self._memcpy_stream):
            batch = next(it).to("cuda", non_blocking=True)
        self.batches.append(batch)

    def step(self):
        torch.cuda.current_stream().wait_stream(self._memcpy_stream)
        self.batches[0].record_stream(torch.cuda.current_stream())
        return self._model(self.batches[0])


def warm_up_unwaited(model, *inputs):
    # The caller wrote its inputs on the current stream; the warm-up stream
    # reads them without waiting for it.
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        out = model(*inputs)  # CHECK: [[@LINE]]:15: warning: 'inputs' is used on stream 'side' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
    torch.cuda.current_stream().wait_stream(side)
    return out


def warm_up_waited(model, *inputs):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        out = model(*inputs)
    torch.cuda.current_stream().wait_stream(side)
    return out


def offload_on_given_stream(x, stream):
    # A stream passed in may be the caller's current one: not judged here.
    with torch.cuda.stream(stream):
        return x.to("cpu", non_blocking=True)


def offload_unwaited(activation):
    d2h = torch.cuda.Stream()
    with torch.cuda.stream(d2h):
        host = activation.to("cpu", non_blocking=True)  # CHECK: [[@LINE]]:16: warning: 'activation' is used on stream 'd2h' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
    d2h.synchronize()
    return host


def offload_waited(activation):
    d2h = torch.cuda.Stream()
    d2h.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(d2h):
        host = activation.to("cpu", non_blocking=True)
    d2h.synchronize()
    return host


class RequestUnwaited:
    """An unknown call's result made while the side stream is current: the
    side stream's work wrote it."""

    def __init__(self):
        self.dist_stream = torch.cuda.Stream()

    def fetch(self, request):
        with torch.cuda.stream(self.dist_stream):
            data = request.wait()
        return data * 2  # CHECK: [[@LINE]]:16: warning: 'data' is used on the current stream before its write on stream 'self.dist_stream' is ordered before this use{{.*}}[xstream-use-before-ready]


class RequestWaited:
    def __init__(self):
        self.dist_stream = torch.cuda.Stream()

    def fetch(self, request):
        with torch.cuda.stream(self.dist_stream):
            data = request.wait()
        torch.cuda.current_stream().wait_stream(self.dist_stream)
        out = data * 2
        data.record_stream(torch.cuda.current_stream())
        return out


class MaybeStreamUnrecorded:
    """A stream that may be None (then torch.cuda.stream(None) leaves the
    current stream current) and a stream context kept in a name, entered on
    some paths only."""

    use_main_stream = False

    def __init__(self, module, stream):
        self._module = module
        self._stream = stream

    def __call__(self, request):
        stream_ctx = nullcontext() if self.use_main_stream else torch.cuda.stream(self._stream)
        with stream_ctx:
            data = request.wait()
        if self._stream is not None:
            torch.cuda.current_stream().wait_stream(self._stream)
        return self._module(data)  # CHECK: [[@LINE]]:16: warning: 'data' is used on the current stream here and is still held when '__call__' returns{{.*}}[xstream-pending-at-return]


class MaybeStreamRecorded:
    use_main_stream = False

    def __init__(self, module, stream):
        self._module = module
        self._stream = stream

    def __call__(self, request):
        stream_ctx = nullcontext() if self.use_main_stream else torch.cuda.stream(self._stream)
        with stream_ctx:
            data = request.wait()
        if self._stream is not None:
            torch.cuda.current_stream().wait_stream(self._stream)
            data.record_stream(torch.cuda.current_stream())
        return self._module(data)


def gather_then_overwrite(A, out, peer):
    # The current stream reads A while the side stream writes it: nothing
    # orders the two.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    torch.mm(A, A, out=out)
    with torch.cuda.stream(side):
        A.copy_(peer)  # CHECK: [[@LINE]]:9: warning: 'A' is written on stream 'side' while the current stream may still be using it{{.*}}[xstream-write-after-read]
    torch.cuda.current_stream().wait_stream(side)


def gather_then_overwrite_signalled(A, out, peer, signals, symm):
    # The same, but the kernels spin on flags in device memory that the side
    # stream sets after each write (stream memory operations): the order is
    # in the flags, which the byte rules do not judge.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    torch.mm(A, A, out=out)
    with torch.cuda.stream(side):
        A.copy_(peer)
        symm.stream_write_value32(signals, 0, 1)
    torch.cuda.current_stream().wait_stream(side)


@contextmanager
def acquire(stream, event):
    # A custom stream context: waits for the event on entry, records it on
    # exit. Its code before the yield runs where the with is entered.
    event.wait(stream)
    try:
        yield
    finally:
        event.record(stream)


@contextmanager
def side_stream(stream):
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        yield
    torch.cuda.current_stream().wait_stream(stream)


class NodeUnacquired:
    def __init__(self):
        self.stream = torch.cuda.Stream()
        self.event = torch.cuda.Event()

    def backward(self, grad):
        with torch.cuda.stream(self.stream):
            # CHECK: [[@LINE+1]]:19: warning: 'out' is written on stream 'self.stream' here and handed back when 'backward' returns{{.*}}[xstream-pending-at-return]
            out = grad * 2  # CHECK: [[@LINE]]:19: warning: 'grad' is used on stream 'self.stream' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
        return out


class NodeAcquired:
    def __init__(self):
        self.stream = torch.cuda.Stream()
        self.event = torch.cuda.Event()

    def backward(self, grad):
        with acquire(self.stream, self.event):
            with torch.cuda.stream(self.stream):
                out = grad * 2
        return out


def scale_on_side_stream(x):
    # side_stream() waits for the current stream, enters the side stream and
    # joins it back: the with's body runs on it, ordered both ways.
    s = torch.cuda.Stream()
    with side_stream(s):
        y = x * 2
    return y


def read_back_unsynced(x):
    # The host reads a copy the side stream has not finished.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        host = x.to("cpu", non_blocking=True)  # CHECK: [[@LINE]]:16: warning: 'x' is used on stream 'side' here and is still held when 'read_back_unsynced' returns{{.*}}[xstream-pending-at-return]
    return host.tolist()  # CHECK: [[@LINE]]:12: warning: 'host' is read by the host before its write on stream 'side' is finished{{.*}}[xstream-use-before-ready]


def read_back_synced(x):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        host = x.to("cpu", non_blocking=True)
    side.synchronize()
    return host.tolist()


def pinned_check_unsynced(x):
    dst = torch.empty(x.shape, dtype=x.dtype, device="cpu", pin_memory=True)
    dst.copy_(x, non_blocking=True)
    done = torch.cuda.Event()
    done.record()
    assert dst.sum() > 0  # CHECK: [[@LINE]]:12: warning: 'dst' is read by the host before its write on the current stream is finished{{.*}}[xstream-use-before-ready]


def pinned_check_synced(x):
    dst = torch.empty(x.shape, dtype=x.dtype, device="cpu", pin_memory=True)
    dst.copy_(x, non_blocking=True)
    done = torch.cuda.Event()
    done.record()
    done.synchronize()
    assert dst.sum() > 0


def host_view_then_synced(x):
    # numpy() of host memory is a view: nothing is read until after the sync.
    host = x.to("cpu", non_blocking=True)
    arr = host.numpy()
    torch.cuda.current_stream().synchronize()
    return arr.sum()


def blocking_copy_read(x):
    # A copy to the host without non_blocking has finished when it returns.
    host = x.to("cpu")
    return host.tolist()


class GradBucketUnwaited:
    """A tensor kept on self that no method makes on a side stream: written
    on the current stream (backward fills it), read here on the side stream
    with no wait for the current one."""

    def __init__(self, grad_data):
        self.comm_stream = torch.cuda.Stream()
        self.grad_data = grad_data

    def reduce(self, out):
        with torch.cuda.stream(self.comm_stream):
            torch.distributed.reduce_scatter_tensor(out, self.grad_data)  # CHECK: [[@LINE]]:13: warning: 'self.grad_data' is used on stream 'self.comm_stream' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
        torch.cuda.current_stream().wait_stream(self.comm_stream)


class GradBucketWaited:
    def __init__(self, grad_data):
        self.comm_stream = torch.cuda.Stream()
        self.grad_data = grad_data

    def reduce(self, out):
        self.comm_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.comm_stream):
            torch.distributed.reduce_scatter_tensor(out, self.grad_data)
        torch.cuda.current_stream().wait_stream(self.comm_stream)


def warm_up_then_write(model, static_input):
    # The warm-up stream reads static_input; the write after it is not
    # ordered after that read.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        model(static_input)
    static_input.mul_(2)  # CHECK: [[@LINE]]:5: warning: 'static_input' is written on the current stream while stream 'side' may still be using it{{.*}}[xstream-write-after-read]


def warm_up_then_capture(model, static_input, graph):
    # torch.cuda.graph() synchronizes the device before it captures.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        model(static_input)
    with torch.cuda.graph(graph):
        static_input.mul_(2)


class OffloadOnDefault:
    """self.s0 is the default stream: a copy on it is on the current stream;
    on the other path the copy on self.s1 reads the activation, which pack
    neither records nor keeps."""

    def __init__(self, use_streams):
        self.use_streams = use_streams
        self.s0 = torch.cuda.default_stream()
        self.s1 = torch.cuda.Stream()

    def pack(self, activation):
        if self.use_streams:
            self.s1.wait_stream(self.s0)
        stream = self.s1 if self.use_streams else self.s0
        with torch.cuda.stream(stream):
            host = activation.to("cpu", non_blocking=True)  # CHECK: [[@LINE]]:20: warning: 'activation' is used on stream 'self.s1' here and is still held when 'pack' returns{{.*}}[xstream-pending-at-return]
        return host


def reduce_guarded(grad, out, accel, copy_streams):
    # resolves_data_dependency() is False on CUDA: the waits are made.
    stream = torch.cuda.Stream()
    if not accel.resolves_data_dependency():
        producers = copy_streams or {torch.cuda.current_stream()}
        for producer in producers:
            stream.wait_stream(producer)
    with torch.cuda.stream(stream):
        torch.distributed.reduce_scatter_tensor(out, grad)
    torch.cuda.current_stream().wait_stream(stream)


def reduce_misguarded(grad, out, accel):
    stream = torch.cuda.Stream()
    if accel.resolves_data_dependency():
        stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        torch.distributed.reduce_scatter_tensor(out, grad)  # CHECK: [[@LINE]]:9: warning: 'grad' is used on stream 'stream' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
    torch.cuda.current_stream().wait_stream(stream)


def fill_on_side(dim):
    # torch.rand(dim, dim): sizes, not tensors the caller wrote.
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x = torch.rand(dim, dim, device="cuda")
        y = x * 2
    torch.cuda.current_stream().wait_stream(side)
    y.record_stream(torch.cuda.current_stream())
    return y


class MixedBatchesSideRead:
    """The object keeps batches copied on the current stream and batches
    copied under the memcpy stream in one list: which of the two an element
    is, is not known. A side stream reads one and the element is replaced,
    and no method ever makes either stream wait for the side stream."""

    def __init__(self, model):
        self._model = model
        self._memcpy_stream = torch.cuda.Stream()
        self._side = torch.cuda.Stream()
        self.batches = []

    def enqueue_batch(self, loader):
        # Copied on the current stream; copy_batch copies under the memcpy
        # stream.
        self.batches.append(loader.next_batch().to("cuda"))
        self._memcpy_stream.wait_stream(torch.cuda.current_stream())

    def copy_batch(self, batch):
        # A device tensor's .to("cuda") would be the tensor itself: a clone
        # is a new one, made under the memcpy stream.
        with torch.cuda.stream(self._memcpy_stream):
            return batch.clone()

    def progress(self, it):
        self.enqueue_batch(it)
        self._side.wait_stream(self._memcpy_stream)
        with torch.cuda.stream(self._side):
            out = self._model(self.batches[1])
        self.batches[1] = self.copy_batch(self.batches[1])  # CHECK: [[@LINE]]:9: warning: 'self.batches[1]' is freed by this assignment on stream 'self._memcpy_stream' while stream 'self._side' may still be using it{{.*}}[xstream-unordered-free]
        torch.cuda.current_stream().wait_stream(self._memcpy_stream)
        return out


class MixedBatchesSideReadWaitedLater:
    """The same, and the current stream waits for the side stream before
    the call returns: the next call makes the memcpy stream wait for the
    current stream before it copies again, so whichever stream's pool the
    element went back to, it waits for the side read before allocating
    there again (a free ahead of its wait, not a race)."""

    def __init__(self, model):
        self._model = model
        self._memcpy_stream = torch.cuda.Stream()
        self._side = torch.cuda.Stream()
        self.batches = []

    def enqueue_batch(self, loader):
        self.batches.append(loader.next_batch().to("cuda"))
        self._memcpy_stream.wait_stream(torch.cuda.current_stream())

    def copy_batch(self, batch):
        with torch.cuda.stream(self._memcpy_stream):
            return batch.clone()

    def progress(self, it):
        self.enqueue_batch(it)
        self._side.wait_stream(self._memcpy_stream)
        with torch.cuda.stream(self._side):
            out = self._model(self.batches[1])
        self.batches[1] = self.copy_batch(self.batches[1])
        torch.cuda.current_stream().wait_stream(self._memcpy_stream)
        torch.cuda.current_stream().wait_stream(self._side)
        return out


class MixedBatchesCurrentRead:
    """The same list read on the current stream: an element copied on the
    current stream goes back to that stream's pool, which its read is
    ordered with, so the replacement is not reported (nor, missed, when the
    element is one copied under the memcpy stream)."""

    def __init__(self, model):
        self._model = model
        self._memcpy_stream = torch.cuda.Stream()
        self.batches = []

    def enqueue_batch(self, loader):
        # Copied on the current stream; copy_batch copies under the memcpy
        # stream.
        self.batches.append(loader.next_batch().to("cuda"))
        self._memcpy_stream.wait_stream(torch.cuda.current_stream())

    def copy_batch(self, batch):
        # A device tensor's .to("cuda") would be the tensor itself: a clone
        # is a new one, made under the memcpy stream.
        with torch.cuda.stream(self._memcpy_stream):
            return batch.clone()

    def progress(self, loader):
        self.enqueue_batch(loader)
        torch.cuda.current_stream().wait_stream(self._memcpy_stream)
        out = self._model(self.batches[1])
        self.batches[1] = self.copy_batch(loader.next_batch())
        torch.cuda.current_stream().wait_stream(self._memcpy_stream)
        return out
