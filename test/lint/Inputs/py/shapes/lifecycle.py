# One object across the calls a framework makes of it: what the first call
# puts on self or ctx, the next one frees. Each bug is followed by its fixed
# twin, which must stay silent.
import torch
from torch.autograd.graph import saved_tensors_hooks


class OffloadUnordered(saved_tensors_hooks):
    def __init__(self):
        self.d2h = torch.cuda.Stream()
        self.stash = {}

        def pack(t):
            self.d2h.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self.d2h):
                host = t.to("cpu", non_blocking=True)  # CHECK: [[@LINE]]:24: warning: 't' is used on stream 'self.d2h' here and is still held when 'pack' returns{{.*}}[xstream-pending-at-return]
            self.stash[id(t)] = t
            return (id(t), host)

        def unpack(packed):
            tid, host = packed
            del self.stash[tid]  # CHECK: [[@LINE]]:13: warning: 'self.stash[?]' is freed on the current stream while stream 'self.d2h' may still be using it{{.*}}[xstream-unordered-free]
            return host.to("cuda", non_blocking=True)  # CHECK: [[@LINE]]:20: warning: 'host' is used on the current stream before its write on stream 'self.d2h' is ordered before this use{{.*}}[xstream-use-before-ready]

        super().__init__(pack, unpack)


class OffloadWaited(saved_tensors_hooks):
    def __init__(self):
        self.d2h = torch.cuda.Stream()
        self.stash = {}

        def pack(t):
            self.d2h.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self.d2h):
                host = t.to("cpu", non_blocking=True)
            self.stash[id(t)] = t
            return (id(t), host)

        def unpack(packed):
            tid, host = packed
            torch.cuda.current_stream().wait_stream(self.d2h)
            del self.stash[tid]
            return host.to("cuda", non_blocking=True)

        super().__init__(pack, unpack)


class SideScaleUnordered(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, side):
        with torch.cuda.stream(side):
            y = x.mul(2)
        ctx.side_input = x
        ctx.side = side
        return y

    @staticmethod
    def backward(ctx, grad):
        ctx.side_input = None  # CHECK: [[@LINE]]:9: warning: 'forward:x' is freed by this assignment on the current stream while stream 'forward:side' may still be using it{{.*}}[xstream-unordered-free]
        return grad * 2, None


class SideScaleWaited(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, side):
        with torch.cuda.stream(side):
            y = x.mul(2)
        ctx.side_input = x
        ctx.side = side
        return y

    @staticmethod
    def backward(ctx, grad):
        torch.cuda.current_stream().wait_stream(ctx.side)
        ctx.side_input = None
        return grad * 2, None


class PrefetchScopeUnordered:
    def __init__(self, source, side):
        self.source = source
        self.side = side
        self.staged = None

    def __enter__(self):
        with torch.cuda.stream(self.side):
            self.staged = self.source.to("cuda", non_blocking=True)
            self.source.record_stream(self.side)
        return self

    def __exit__(self, *exc):
        self.source = None
        self.staged.add_(1)  # CHECK: [[@LINE]]:9: warning: 'self.staged' is written on the current stream while stream 'self.side' may still be using it{{.*}}[xstream-write-after-read]


class PrefetchScopeWaited:
    def __init__(self, source, side):
        self.source = source
        self.side = side
        self.staged = None

    def __enter__(self):
        with torch.cuda.stream(self.side):
            self.staged = self.source.to("cuda", non_blocking=True)
            self.source.record_stream(self.side)
        return self

    def __exit__(self, *exc):
        torch.cuda.current_stream().wait_stream(self.side)
        self.source = None
        self.staged.add_(1)
        # Made on the side stream and kept by the object: its free, whenever
        # it comes, must not run ahead of this use.
        self.staged.record_stream(torch.cuda.current_stream())


class PrefetchHooksUnordered(torch.nn.Module):
    """A forward pre-hook copies the weights in on a side stream, forward
    reads them, the forward hook drops them: nothing orders the side stream
    after forward's read."""

    def __init__(self, host_weight):
        super().__init__()
        self.host_weight = host_weight
        self.side = torch.cuda.Stream()
        self.register_forward_pre_hook(self._fetch)
        self.register_forward_hook(self._drop)

    def _fetch(self, module, args):
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            self.weight = self.host_weight.to("cuda", non_blocking=True)
        torch.cuda.current_stream().wait_stream(self.side)

    def forward(self, x):
        return x @ self.weight

    def _drop(self, module, args, output):
        self.weight = None  # CHECK: [[@LINE]]:9: warning: 'self.weight' is freed by this assignment on stream 'self.side' while the current stream may still be using it{{.*}}[xstream-unordered-free]


class PrefetchHooksRecorded(torch.nn.Module):
    def __init__(self, host_weight):
        super().__init__()
        self.host_weight = host_weight
        self.side = torch.cuda.Stream()
        self.register_forward_pre_hook(self._fetch)
        self.register_forward_hook(self._drop)

    def _fetch(self, module, args):
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            self.weight = self.host_weight.to("cuda", non_blocking=True)
        torch.cuda.current_stream().wait_stream(self.side)
        self.weight.record_stream(torch.cuda.current_stream())

    def forward(self, x):
        return x @ self.weight

    def _drop(self, module, args, output):
        self.weight = None
