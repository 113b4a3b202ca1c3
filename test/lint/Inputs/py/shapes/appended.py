# Entries put into a container the function did not make (a closure's list,
# an object's list) and read back from it later in the same function: the
# loop over the container yields what was appended there, so a tensor copied
# out on a side stream and then released through the container is the same
# tensor. Each bug is followed by its fixed twin, which must stay silent.
import torch


def make_spiller(tensors, side):
    spilled = []

    # The nested function fills its enclosing function's list, then frees
    # each device block through it while the copy on `side` may still read it.
    def spill():
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for t in tensors:
                host = torch.empty(t.shape, dtype=t.dtype, device="cpu", pin_memory=True)
                host.copy_(t, non_blocking=True)
                spilled.append((t, host))
            for t, _ in spilled:
                t.untyped_storage().resize_(0)  # CHECK: [[@LINE]]:17: warning: 't' is freed by resize_(0) on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]
    return spill


# Fixed: each block is recorded on the copy stream before it is released.
def make_spiller_recorded(tensors, side):
    spilled = []

    def spill():
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for t in tensors:
                host = torch.empty(t.shape, dtype=t.dtype, device="cpu", pin_memory=True)
                host.copy_(t, non_blocking=True)
                t.record_stream(side)
                spilled.append((t, host))
            for t, _ in spilled:
                t.untyped_storage().resize_(0)
    return spill


class Spiller:
    """Keeps what it spilled in a list of its own."""

    def __init__(self):
        self.copy_stream = torch.cuda.Stream()
        self.spilled = []

    def spill(self, tensors):
        self.copy_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.copy_stream):
            for t in tensors:
                host = torch.empty(t.shape, dtype=t.dtype, device="cpu", pin_memory=True)
                host.copy_(t, non_blocking=True)
                self.spilled.append((t, host))
            for t, _ in self.spilled:
                t.untyped_storage().resize_(0)  # CHECK: [[@LINE]]:17: warning: 't' is freed by resize_(0) on the current stream while stream 'self.copy_stream' may still be using it{{.*}}[xstream-unordered-free]


class SpillerRecorded:
    """Fixed: the block is recorded on the copy stream."""

    def __init__(self):
        self.copy_stream = torch.cuda.Stream()
        self.spilled = []

    def spill(self, tensors):
        self.copy_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.copy_stream):
            for t in tensors:
                host = torch.empty(t.shape, dtype=t.dtype, device="cpu", pin_memory=True)
                host.copy_(t, non_blocking=True)
                t.record_stream(self.copy_stream)
                self.spilled.append((t, host))
            for t, _ in self.spilled:
                t.untyped_storage().resize_(0)
