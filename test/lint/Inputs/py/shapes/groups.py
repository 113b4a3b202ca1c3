# A group of activations kept in a dict by tag, offloaded in bulk: each
# device tensor is copied to the host on a side stream and its entry replaced
# by the host copy, directly (`group.tensors[tag] = state`) or through a
# method of the group called on an element of a list of groups, whose class
# the check finds by the method's name (only one class of the module has
# it). The entry was the device tensor's last reference: it goes while the
# copy may still read it. A slice assignment of a tuple written out
# (`batch[:] = tuple(...)`) fills a sequence object's slots: no write into a
# tensor; so does one into a parameter annotated as a container or as a
# class of the run that derives from no tensor (`batch: Microbatch`,
# `batch: list[Tensor]`), whatever is assigned. Into a parameter annotated
# as a tensor, or as a class named as one (`PackedTensor`), it is a copy.
# Each bug is followed by its fixed twin, which must stay silent.
import torch


class TensorGroup:
    def __init__(self, name):
        self.name = name
        self.tensors = {}

    def put(self, tag, value):
        self.tensors[tag] = value


class GroupOffloader:
    def __init__(self):
        self.d2h = torch.cuda.Stream()
        self.groups = []
        self.pending = []

    def host_copy(self, device_tensor):
        host = torch.empty(device_tensor.shape, dtype=device_tensor.dtype, device="cpu", pin_memory=True)
        host.copy_(device_tensor, non_blocking=True)
        return (device_tensor.device, host)

    def open_group(self, name):
        self.groups.append(TensorGroup(name))
        self.pending.append(self.groups[-1])

    def offload_through_method(self):
        group = self.pending[-1]
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            for tag, device_tensor in group.tensors.items():
                state = self.host_copy(device_tensor)
                group.put(tag, state)  # CHECK: [[@LINE]]:17: warning: 'self.pending[?].tensors[*]' is freed in 'put', called here, on the current stream while stream 'self.d2h' may still be using it{{.*}}[xstream-unordered-free]
        self.pending.pop()

    def offload_through_method_recorded(self):
        group = self.pending[-1]
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            for tag, device_tensor in group.tensors.items():
                state = self.host_copy(device_tensor)
                device_tensor.record_stream(self.d2h)
                group.put(tag, state)
        self.pending.pop()

    def offload_in_place(self):
        group = self.pending[-1]
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            for tag, device_tensor in group.tensors.items():
                state = self.host_copy(device_tensor)
                group.tensors[tag] = state  # CHECK: [[@LINE]]:17: warning: 'self.pending[?].tensors[*]' is freed by this assignment on the current stream while stream 'self.d2h' may still be using it{{.*}}[xstream-unordered-free]
        self.pending.pop()

    def offload_in_place_recorded(self):
        group = self.pending[-1]
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            for tag, device_tensor in group.tensors.items():
                state = self.host_copy(device_tensor)
                device_tensor.record_stream(self.d2h)
                group.tensors[tag] = state
        self.pending.pop()

    def offload_kept_until_synced(self):
        # The device tensor is still named after the entry goes and read
        # once the copy is done: nothing is released under the copy.
        group = self.pending[-1]
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            for tag, device_tensor in group.tensors.items():
                state = self.host_copy(device_tensor)
                group.tensors[tag] = state
                self.d2h.synchronize()
                print(device_tensor.shape)
        self.pending.pop()


# Two classes of the module define `stash`: which one an element of the
# list is, the check does not know, and it follows neither.
class ReplacingShelf:
    def __init__(self):
        self.tensors = {}

    def stash(self, tag, value):
        self.tensors[tag] = value


class KeepingShelf:
    def __init__(self):
        self.tensors = {}
        self.history = []

    def stash(self, tag, value):
        self.history.append((tag, value))


class ShelfOffloader:
    def __init__(self):
        self.d2h = torch.cuda.Stream()
        self.shelves = []

    def host_copy(self, device_tensor):
        host = torch.empty(device_tensor.shape, dtype=device_tensor.dtype, device="cpu", pin_memory=True)
        host.copy_(device_tensor, non_blocking=True)
        return (device_tensor.device, host)

    def offload_last(self):
        shelf = self.shelves[-1]
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            for tag, device_tensor in shelf.tensors.items():
                state = self.host_copy(device_tensor)
                shelf.stash(tag, state)



class WrappedStoreOffloader:
    # `self.store` is whatever the caller handed in (not an element of this
    # module's lists): its `put` is not taken for TensorGroup's, which would
    # replace the entry; another store's may keep it.
    def __init__(self, store):
        self.d2h = torch.cuda.Stream()
        self.store = store

    def offload(self):
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            for tag, device_tensor in self.store.tensors.items():
                host = torch.empty(device_tensor.shape, dtype=device_tensor.dtype, device="cpu", pin_memory=True)
                host.copy_(device_tensor, non_blocking=True)
                self.store.put(tag, host)
        torch.cuda.current_stream().wait_stream(self.d2h)


class CopyToNext(torch.autograd.Function):
    @staticmethod
    def forward(ctx, prev_stream, next_stream, *inputs):
        with torch.cuda.stream(next_stream):
            return tuple(x.to("cuda", non_blocking=True) for x in inputs)


def hand_to_next_stage(batch, prev_stream, next_stream):
    # `batch` is a sequence object of tensors (its slots, not its storage,
    # get the stage's outputs): a slice assignment of a tuple is no write
    # into a tensor.
    moved = CopyToNext.apply(prev_stream, next_stream, *batch)
    batch[:] = tuple([x if x.is_floating_point() else x.detach() for x in moved])



class Microbatch:
    # A sequence object of tensors, as a pipeline's micro-batch: indexing it
    # reads and fills its slots.
    def __init__(self, values):
        self.values = list(values)

    def __getitem__(self, index):
        return self.values[index]

    def __setitem__(self, index, value):
        self.values[index] = value


def hand_over_annotated(batch: Microbatch, prev_stream, next_stream):
    # The annotation says `batch` is a Microbatch, a class of this module
    # deriving from no tensor: the slice assignment of whatever the
    # autograd function returns fills its slots.
    batch[:] = CopyToNext.apply(prev_stream, next_stream, *batch)


def hand_over_listed(batch: "list[torch.Tensor]", prev_stream, next_stream):
    batch[:] = CopyToNext.apply(prev_stream, next_stream, *batch)


def fence(batches, streams):
    for i in range(len(batches)):
        hand_over_annotated(batches[i], streams[i], streams[i + 1])
        hand_over_listed(batches[i], streams[i], streams[i + 1])


def overwrite(t: torch.Tensor):
    t[:] = torch.zeros_like(t)


class PackedTensor:
    # Named as a tensor: a wrapper whose slots are its tensor's elements.
    def __init__(self, data):
        self.data = data

    def __setitem__(self, index, value):
        self.data[index] = value


def overwrite_packed(t: PackedTensor):
    t[:] = torch.zeros(8, device="cuda")


def stage_input(side):
    # A tensor: `t[:] = ...` is a copy into it, made while the side stream
    # may still read it.
    x = torch.ones(8, device="cuda")
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        partial = x.sum()
    overwrite(x)  # CHECK: [[@LINE]]:5: warning: 'x' is written on the current stream while stream 'side' may still be using it{{.*}}[xstream-write-after-read]
    torch.cuda.current_stream().wait_stream(side)
    return partial


def stage_packed(side):
    x = torch.ones(8, device="cuda")
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        partial = x.sum()
    overwrite_packed(x)  # CHECK: [[@LINE]]:5: warning: 'x' is written on the current stream while stream 'side' may still be using it{{.*}}[xstream-write-after-read]
    torch.cuda.current_stream().wait_stream(side)
    return partial


def stage_input_ordered(side):
    x = torch.ones(8, device="cuda")
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        partial = x.sum()
    torch.cuda.current_stream().wait_stream(side)
    overwrite(x)
    return partial
