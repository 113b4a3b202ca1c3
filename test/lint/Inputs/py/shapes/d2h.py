# Device-to-host copies on a side stream that read what the caller's stream
# just wrote: a gradient handed to a hook, a parameter handed to an offload
# helper, the values of a dict of outputs. The side stream must wait for the
# current stream before the copy. A helper given a literal flag or None
# (`zeros_only=True`, a parameter left to its default) runs only the branch
# that literal takes. Each bug is followed by its fixed twin, which must
# stay silent.
import contextlib

import torch

_copy_streams = {}


def copy_stream_for(device) -> torch.cuda.Stream:
    # One stream per device, made on first use and kept in a cache the check
    # does not follow: the annotation says what it returns.
    stream = _copy_streams.get(device)
    if stream is not None:
        return stream
    return _copy_streams.setdefault(device, torch.cuda.Stream(device=device))


class GradToHost:
    """A post-accumulate-grad hook copies each gradient into its host twin."""

    def __init__(self):
        self.d2h = torch.cuda.Stream()
        self.host_twin = {}

    # The destination is named for host memory, so its source is device
    # memory the backward just wrote on the current stream.
    def hook_unwaited(self, p_device):
        p_host = self.host_twin[p_device]
        with torch.cuda.stream(self.d2h):
            p_host.grad.copy_(p_device.grad, non_blocking=True)  # CHECK: [[@LINE]]:13: warning: 'p_device.grad' is used on stream 'self.d2h' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
        return self.d2h.record_event()


# Fixed: the copy stream waits for the backward first. (A class of its own:
# a wait in another method of the same class is taken as the class's
# protocol, which would hide the bug above.)
class GradToHostWaited(GradToHost):
    def hook_waited(self, p_device):
        p_host = self.host_twin[p_device]
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            p_host.grad.copy_(p_device.grad, non_blocking=True)
        return self.d2h.record_event()


class ActivationOffload:
    """Offloads on its own stream when it has one, else on the current one;
    a helper method makes the stream context."""

    def __init__(self, overlap):
        self.side = torch.cuda.Stream() if overlap else None
        self.overlap = overlap
        self.kept = {}

    @property
    def compute_stream(self):
        return torch.cuda.current_stream()

    def stream_context(self, stream):
        if stream is None:
            return contextlib.nullcontext()
        return torch.cuda.stream(stream)

    def offload_unwaited(self, key, activation):
        stream = self.side if self.overlap else self.compute_stream
        with self.stream_context(stream):
            cpu_copy = torch.empty(activation.shape, dtype=activation.dtype, device="cpu", pin_memory=True)
            cpu_copy.copy_(activation.detach(), non_blocking=True)  # CHECK: [[@LINE]]:13: warning: 'activation' is used on stream 'self.side' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
        activation.record_stream(stream)
        self.kept[key] = cpu_copy


class ActivationOffloadWaited(ActivationOffload):
    def offload_waited(self, key, activation):
        stream = self.side if self.overlap else self.compute_stream
        if self.overlap:
            self.side.wait_stream(self.compute_stream)
        with self.stream_context(stream):
            cpu_copy = torch.empty(activation.shape, dtype=activation.dtype, device="cpu", pin_memory=True)
            cpu_copy.copy_(activation.detach(), non_blocking=True)
        activation.record_stream(stream)
        self.kept[key] = cpu_copy


# A dict of model outputs copied to pinned host memory, item by item, on a
# per-device stream from the cache above.
def outputs_to_host_unwaited(outputs, device):
    stream = copy_stream_for(device)
    host = {}
    with torch.cuda.stream(stream):
        for name, value in outputs.items():
            pinned = torch.empty(value.shape, dtype=value.dtype, device="cpu", pin_memory=True)
            pinned.copy_(value, non_blocking=True)  # CHECK: [[@LINE]]:13: warning: 'outputs[*]' is used on stream '<copy_stream_for()>' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
            value.record_stream(stream)
            host[name] = pinned
    return host, stream.record_event()


def outputs_to_host_waited(outputs, device):
    stream = copy_stream_for(device)
    stream.wait_stream(torch.cuda.current_stream())
    host = {}
    with torch.cuda.stream(stream):
        for name, value in outputs.items():
            pinned = torch.empty(value.shape, dtype=value.dtype, device="cpu", pin_memory=True)
            pinned.copy_(value, non_blocking=True)
            value.record_stream(stream)
            host[name] = pinned
    return host, stream.record_event()


# An asynchronous reduce-scatter of the weights on a stream the object keeps
# (declared with an annotation), after the forward; the optimizer updated
# the weights on the current stream. A flag handed to the collective is no
# tensor.
class AsyncWeightReduce:
    def __init__(self, module, group):
        self.module = module
        self.group = group
        self.async_stream: torch.cuda.Stream = torch.cuda.Stream()
        self.work = None

    def reduce_unwaited(self, shard, average: bool = True):
        with torch.cuda.stream(self.async_stream):
            flat = self.module.weight.contiguous()  # CHECK: [[@LINE]]:20: warning: 'self.module.weight' is used on stream 'self.async_stream' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
            self.work = reduce_scatter(shard, flat, average=average, group=self.group)
        shard.record_stream(self.async_stream)


class AsyncWeightReduceWaited:
    def __init__(self, module, group):
        self.module = module
        self.group = group
        self.async_stream: torch.cuda.Stream = torch.cuda.Stream()
        self.work = None

    def reduce_waited(self, shard, average: bool = True):
        self.async_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.async_stream):
            flat = self.module.weight.contiguous()
            self.work = reduce_scatter(shard, flat, average=average, group=self.group)
        shard.record_stream(self.async_stream)


def reduce_scatter(output, inp, average, group):
    return torch.distributed.reduce_scatter_tensor(output, inp, group=group, async_op=True)


# Flags handed to a collective launched on a side stream are no tensors (by
# an annotation, or a constant default), so nothing the caller wrote is read
# there.
class CoalescedGather:
    def __init__(self, engine):
        self.engine = engine
        self.gather_stream: torch.cuda.Stream = torch.cuda.Stream()

    def gather(self, handle_id, quantize: bool, chunks=4):
        with torch.cuda.stream(self.gather_stream):
            handle = self.engine.launch_gather(handle_id, quantize=quantize, chunks=chunks)
        return handle


# Draft tokens copied to the host on a copy stream, or only the host buffer
# zeroed: replacing the draft afterwards frees it while the copy may still
# read it, unless the copy was not made.
class DraftCopier:
    def __init__(self):
        self.copy_stream = torch.cuda.Stream()
        self.host = torch.empty(64, dtype=torch.int64, pin_memory=True)
        self.event = torch.cuda.Event()
        self.draft = None
        self.spare = None

    def _copy_to_host(self, zeros_only=False):
        draft = self.draft
        n = draft.shape[0]
        with torch.cuda.stream(self.copy_stream):
            if not zeros_only:
                self.copy_stream.wait_stream(torch.cuda.current_stream())
                self.host[:n].copy_(draft, non_blocking=True)
            else:
                self.host[:n] = 0
            self.event.record()

    def _wait_for(self, done=None):
        if done is not None:
            torch.cuda.current_stream().wait_event(done)

    def step_copy(self, make):
        self._copy_to_host()
        self.draft = make()  # CHECK: [[@LINE]]:9: warning: 'self.draft' is freed by this assignment on the current stream while stream 'self.copy_stream' may still be using it{{.*}}[xstream-unordered-free]

    def step_copy_waited(self, make):
        self._copy_to_host()
        torch.cuda.current_stream().wait_event(self.event)
        self.draft = make()

    def step_zeros(self, make):
        self._copy_to_host(zeros_only=True)
        self.draft = make()

    def step_wait_default(self, make):
        self._copy_to_host()
        self._wait_for()
        self.draft = make()  # CHECK: [[@LINE]]:9: warning: 'self.draft' is freed by this assignment on the current stream while stream 'self.copy_stream' may still be using it{{.*}}[xstream-unordered-free]

    def step_wait_event(self, make):
        self._copy_to_host()
        self._wait_for(self.event)
        self.draft = make()




# A gradient copied to the host on a side stream while the optimizer's
# foreach step runs on the current stream, which waits for the copy before
# it goes on. The copy and the update both read the gradient: an in-place
# foreach op writes only its first list (the parameters).
def step_while_offloading(params, host_grad, lr):
    grad = torch.ones(1024, device="cuda")
    d2h = torch.cuda.Stream()
    d2h.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(d2h):
        host_grad.copy_(grad, non_blocking=True)
    torch._foreach_add_(params, [grad], alpha=-lr)
    torch.cuda.current_stream().wait_stream(d2h)


# Zeroing the gradient writes it while the copy may still read it.
def zero_while_offloading(host_grad):
    grad = torch.ones(1024, device="cuda")
    d2h = torch.cuda.Stream()
    d2h.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(d2h):
        host_grad.copy_(grad, non_blocking=True)
    torch._foreach_zero_([grad])  # CHECK: [[@LINE]]:5: warning: 'grad' is written on the current stream while stream 'd2h' may still be using it{{.*}}[xstream-write-after-read]
    torch.cuda.current_stream().wait_stream(d2h)


# Arithmetic on a parameter annotated as a tensor is a kernel on the current
# stream: the copy stream reading its result must wait for it.
def scaled_to_host(grad: torch.Tensor, host_grad, scale: float):
    scaled = grad * scale
    d2h = torch.cuda.Stream()
    with torch.cuda.stream(d2h):
        host_grad.copy_(scaled, non_blocking=True)  # CHECK: [[@LINE]]:9: warning: 'scaled' is used on stream 'd2h' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
    d2h.synchronize()


def scaled_to_host_waited(grad: torch.Tensor, host_grad, scale: float):
    scaled = grad * scale
    d2h = torch.cuda.Stream()
    d2h.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(d2h):
        host_grad.copy_(scaled, non_blocking=True)
    d2h.synchronize()


# A reduction of a parameter annotated as a tensor is a kernel too
# (`x.sum(dim=0)`): its result, copied to the host on a side stream and
# dropped before the current stream waits for the copy, is released while
# the copy may still read it.
def counts_to_host(scores: torch.Tensor):
    counts = scores.sum(dim=0)
    d2h = torch.cuda.Stream()
    d2h.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(d2h):
        host = counts.to("cpu", non_blocking=True)
    del counts  # CHECK: [[@LINE]]:5: warning: 'counts' is freed on the current stream while stream 'd2h' may still be using it{{.*}}[xstream-unordered-free]
    return host, d2h.record_event()


def counts_to_host_recorded(scores: torch.Tensor):
    counts = scores.sum(dim=0)
    d2h = torch.cuda.Stream()
    d2h.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(d2h):
        host = counts.to("cpu", non_blocking=True)
        counts.record_stream(d2h)
    del counts
    return host, d2h.record_event()
