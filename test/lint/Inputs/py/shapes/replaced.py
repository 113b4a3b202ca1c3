# A helper that hands back, on one path, a host copy in place of the tensor
# it was given (`x = x.to("cpu", non_blocking=True)` under an `if`), and a
# caller that stores the result where the tensor was (`self.x =
# helper(self.x)`): on that path the device tensor is released while the
# copy on the side stream may still read it. Each bug is followed by its
# fixed twin, which must stay silent.
import torch


def to_host_if_device(t):
    if torch.is_tensor(t) and t.is_cuda:
        host = t.to("cpu", non_blocking=True)
        t = host
    return t


def to_host_if_device_recorded(t, record=False):
    if torch.is_tensor(t) and t.is_cuda:
        host = t.to("cpu", non_blocking=True)
        if record:
            t.record_stream(torch.cuda.current_stream())
        t = host
    return t


class Router:
    """Counts made on the current stream, brought to the host on a side
    stream for the host's bookkeeping."""

    def __init__(self):
        self.d2h = torch.cuda.Stream()
        self.done = None

    def route(self, scores):
        self.counts = scores.sum(dim=0)

    def counts_to_host(self):
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            self.counts = to_host_if_device(self.counts)  # CHECK: [[@LINE]]:13: warning: 'self.counts' is freed by this assignment on the current stream while stream 'self.d2h' may still be using it{{.*}}[xstream-unordered-free]
        self.done = self.d2h.record_event()


class RouterRecorded(Router):
    """Fixed: the helper records the device tensor on the copy's stream."""

    def counts_to_host(self):
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            self.counts = to_host_if_device_recorded(self.counts, record=True)
        self.done = self.d2h.record_event()


class SplitsDispatcher:
    """An all-to-all's per-rank sizes, made on the device and brought to the
    host on a side stream before the all-to-all reads them there. A name of
    sizes (`splits`) is most often a list of ints; here the helper uses it
    as a tensor (`.to(...)`), and the assignment releases the device one."""

    def __init__(self):
        self.d2h = torch.cuda.Stream()
        self.done = None

    def count(self, scores):
        self.input_splits = scores.sum(dim=0)

    def splits_to_host(self):
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            self.input_splits = to_host_if_device(self.input_splits)  # CHECK: [[@LINE]]:13: warning: 'self.input_splits' is freed by this assignment on the current stream while stream 'self.d2h' may still be using it{{.*}}[xstream-unordered-free]
        self.done = self.d2h.record_event()


class SplitsDispatcherRecorded(SplitsDispatcher):
    """Fixed: the helper records the device tensor on the copy's stream."""

    def splits_to_host(self):
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            self.input_splits = to_host_if_device_recorded(self.input_splits, record=True)
        self.done = self.d2h.record_event()
