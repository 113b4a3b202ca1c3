# A per-layer cache kept in host memory between uses and prefetched back one
# layer ahead on a side stream (a decoder's offloaded key/value cache), the
# tensors an object keeps from one call to the next, and a record under a
# flag next to an assert. Each bug is followed by its fixed twin, which must
# stay silent.
import torch


class LayerCacheUnwaited:
    """The prefetch stream never waits for the current stream: the block a
    layer's cache was prefetched into goes back to its pool when the layer
    appends to it, while the current stream may still read it, and the
    next prefetch is allocated there."""

    def __init__(self, host_layers):
        self.layers = host_layers
        self.stream = torch.cuda.Stream()

    def prefetch(self, layer):
        with torch.cuda.stream(self.stream):
            self.layers[layer] = self.layers[layer].to("cuda", non_blocking=True)

    def turn(self, layer, x, weight):
        torch.cuda.current_stream().wait_stream(self.stream)
        self.prefetch((layer + 1) % len(self.layers))
        x = torch.tanh(self.layers[layer] @ x + weight)
        self.layers[layer] = torch.cat([self.layers[layer], x.unsqueeze(0)])  # CHECK: [[@LINE]]:9: warning: 'self.layers[layer]' is freed by this assignment on stream 'self.stream' while the current stream may still be using it{{.*}}[xstream-unordered-free]
        self.layers[layer] = self.layers[layer].to("cpu", non_blocking=True)
        return x


class LayerCacheWaited:
    """The prefetch stream waits for the current stream before each
    prefetch: the dropped block is still ahead of that wait, but the pool
    it went back to allocates again only after it."""

    def __init__(self, host_layers):
        self.layers = host_layers
        self.stream = torch.cuda.Stream()

    def prefetch(self, layer):
        with torch.cuda.stream(self.stream):
            self.layers[layer] = self.layers[layer].to("cuda", non_blocking=True)

    def turn(self, layer, x, weight):
        torch.cuda.current_stream().wait_stream(self.stream)
        self.stream.wait_stream(torch.cuda.current_stream())
        self.prefetch((layer + 1) % len(self.layers))
        x = torch.tanh(self.layers[layer] @ x + weight)
        self.layers[layer] = torch.cat([self.layers[layer], x.unsqueeze(0)])
        self.layers[layer] = self.layers[layer].to("cpu", non_blocking=True)
        return x


def grow_unwaited(side, layers, i, weight):
    """An element of the caller's list prefetched under a side stream and
    replaced after the current stream read it."""
    with torch.cuda.stream(side):
        layers[i] = layers[i].to("cuda", non_blocking=True)
    torch.cuda.current_stream().wait_stream(side)
    y = layers[i] @ weight
    layers[i] = torch.cat([layers[i], y])  # CHECK: [[@LINE]]:5: warning: 'layers[i]' is freed by this assignment on stream 'side' while the current stream may still be using it{{.*}}[xstream-unordered-free]
    return y


def grow_recorded(side, layers, i, weight):
    """The same, the prefetched element recorded on the current stream
    before it is replaced; and the host element the upload replaced is no
    block of a stream's pool."""
    with torch.cuda.stream(side):
        layers[i] = layers[i].to("cuda", non_blocking=True)
    torch.cuda.current_stream().wait_stream(side)
    layers[i].record_stream(torch.cuda.current_stream())
    y = layers[i] @ weight
    layers[i] = torch.cat([layers[i], y])
    return y


class StagedUnwaited:
    """A buffer one method allocates under the side stream, another reads on
    the current stream and drops."""

    def __init__(self):
        self.stream = torch.cuda.Stream()
        self.buf = None

    def stage(self, n):
        with torch.cuda.stream(self.stream):
            self.buf = torch.empty(n, device="cuda")

    def consume(self, x):
        torch.cuda.current_stream().wait_stream(self.stream)
        y = x * self.buf
        self.buf = None  # CHECK: [[@LINE]]:9: warning: 'self.buf' is freed by this assignment on stream 'self.stream' while the current stream may still be using it{{.*}}[xstream-unordered-free]
        return y


class StagedRecorded:
    def __init__(self):
        self.stream = torch.cuda.Stream()
        self.buf = None

    def stage(self, n):
        with torch.cuda.stream(self.stream):
            self.buf = torch.empty(n, device="cuda")

    def consume(self, x):
        torch.cuda.current_stream().wait_stream(self.stream)
        y = x * self.buf
        self.buf.record_stream(torch.cuda.current_stream())
        self.buf = None
        return y


class StagedEitherStream:
    """The buffer is made on the current stream on one branch and under the
    side stream on the other: which one a later call drops is not known,
    and on the current-stream path the drop is ordered, so it is not
    reported (a store on one branch does not replace the other's)."""

    def __init__(self):
        self.stream = torch.cuda.Stream()
        self.buf = None

    def stage(self, n, here):
        if here:
            self.buf = torch.empty(n, device="cuda")
        else:
            with torch.cuda.stream(self.stream):
                self.buf = torch.empty(n, device="cuda")

    def consume(self, x):
        torch.cuda.current_stream().wait_stream(self.stream)
        y = x * self.buf
        self.buf = None
        return y


def release_unrecorded(side, n):
    """A block made under a side stream, read on the current stream and
    dropped with nothing recorded."""
    with torch.cuda.stream(side):
        staged = torch.empty(n, device="cuda")
    torch.cuda.current_stream().wait_stream(side)
    total = staged.sum()
    del staged  # CHECK: [[@LINE]]:5: warning: 'staged' is freed on stream 'side' while the current stream may still be using it{{.*}}[xstream-unordered-free]
    return total


def release_recorded_under_flag(side, n, record=True):
    """The same, recorded under a flag next to an assert (torchrec's
    _wait_for_batch): a guard that tests the kind of run, taken as made."""
    with torch.cuda.stream(side):
        staged = torch.empty(n, device="cuda")
    torch.cuda.current_stream().wait_stream(side)
    total = staged.sum()
    if record:
        assert staged.is_cuda, "a device tensor"
        staged.record_stream(torch.cuda.current_stream())
    del staged
    return total
