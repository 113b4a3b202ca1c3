# A device allocation comes from the pool of the stream current when it is
# made; work that stream enqueued before may still use the block (its previous
# owner, freed on that stream). Another stream writing the new tensor must
# first wait for the allocating stream. Each bug is followed by its fixed
# twins, which must stay silent.
import torch


class Prefetcher:
    """Copies the next batch to the device on a copy stream."""

    def __init__(self):
        self.copy_stream = torch.cuda.Stream()

    # The destination is allocated on the current stream and filled on the
    # copy stream at once.
    def prefetch_unwaited(self, host):
        batch = torch.empty_like(host, device="cuda")
        with torch.cuda.stream(self.copy_stream):
            batch.copy_(host, non_blocking=True)  # CHECK: [[@LINE]]:13: warning: 'batch' is written on stream 'self.copy_stream' into a block allocated from the pool of the current stream, which stream 'self.copy_stream' never waited for{{.*}}[xstream-write-after-read]
        batch.record_stream(self.copy_stream)
        return batch, self.copy_stream.record_event()


class PrefetcherWaited:
    def __init__(self):
        self.copy_stream = torch.cuda.Stream()

    # Fixed: the copy stream waits for the current stream after the
    # allocation.
    def prefetch_waited(self, host):
        batch = torch.empty_like(host, device="cuda")
        self.copy_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.copy_stream):
            batch.copy_(host, non_blocking=True)
        batch.record_stream(self.copy_stream)
        return batch, self.copy_stream.record_event()


class PrefetcherOwnPool:
    def __init__(self):
        self.copy_stream = torch.cuda.Stream()

    # Fixed: allocated on the copy stream itself, which orders its own pool.
    def prefetch_own_pool(self, host):
        with torch.cuda.stream(self.copy_stream):
            batch = torch.empty(host.shape, dtype=host.dtype, device="cuda")
            batch.copy_(host, non_blocking=True)
        return batch, self.copy_stream.record_event()


# In place into buffers made on the current stream, one per input, with the
# wait for the allocations left out.
def copy_inputs_unwaited(sources, copy_stream):
    dests = [torch.empty_like(s, device="cuda") for s in sources]
    with torch.cuda.stream(copy_stream):
        for d, s in zip(dests, sources):
            d.copy_(s, non_blocking=True)  # CHECK: [[@LINE]]:13: warning: 'd' is written on stream 'copy_stream' into a block allocated from the pool of the current stream{{.*}}[xstream-write-after-read]
    torch.cuda.current_stream().wait_stream(copy_stream)
    return dests


def copy_inputs_waited(sources, copy_stream):
    dests = [torch.empty_like(s, device="cuda") for s in sources]
    copy_stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(copy_stream):
        for d, s in zip(dests, sources):
            d.copy_(s, non_blocking=True)
    torch.cuda.current_stream().wait_stream(copy_stream)
    return dests
