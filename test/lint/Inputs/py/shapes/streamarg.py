# A prefetching step hands the tensors a data-distribution stream produced to
# a method of a module this package does not define, together with the stream
# the next forward runs on. The method may enqueue work on them there, or
# leave them to that stream's later work, so each one must be recorded on that
# stream too. A stream the function records some tensor on is taken as a
# stream other than the allocation stream, even when it is a parameter. Each
# bug is followed by its fixed twin, which must stay silent.
import torch


def prefetch_lookup_unrecorded(requests, sharded, dist_stream, forward_stream):
    with torch.cuda.stream(dist_stream):
        features = requests.pop("features").wait()
        lengths = requests.pop("lengths").wait()
    torch.cuda.current_stream().wait_stream(dist_stream)
    features.record_stream(torch.cuda.current_stream())
    lengths.record_stream(torch.cuda.current_stream())
    if forward_stream is not None:
        lengths.record_stream(forward_stream)
    sharded.prefetch(features=features, lengths=lengths, forward_stream=forward_stream)  # CHECK: [[@LINE]]:5: warning: 'features' is used on stream 'forward_stream' here and is still held when 'prefetch_lookup_unrecorded' returns{{.*}}[xstream-pending-at-return]
    return features, lengths


def prefetch_lookup_recorded(requests, sharded, dist_stream, forward_stream):
    with torch.cuda.stream(dist_stream):
        features = requests.pop("features").wait()
        lengths = requests.pop("lengths").wait()
    torch.cuda.current_stream().wait_stream(dist_stream)
    features.record_stream(torch.cuda.current_stream())
    lengths.record_stream(torch.cuda.current_stream())
    if forward_stream is not None:
        features.record_stream(forward_stream)
        lengths.record_stream(forward_stream)
    sharded.prefetch(features=features, lengths=lengths, forward_stream=forward_stream)
    return features, lengths


# A stream handed in and never recorded on nor waited for may be the caller's
# current stream: nothing is reported for it.
def prefetch_lookup_on_given_stream(requests, sharded, dist_stream, forward_stream):
    with torch.cuda.stream(dist_stream):
        features = requests.pop("features").wait()
    torch.cuda.current_stream().wait_stream(dist_stream)
    features.record_stream(torch.cuda.current_stream())
    sharded.prefetch(features=features, forward_stream=forward_stream)
    return features


# The caller's host buffer filled by a copy on a recorded stream: pinned
# memory stays with PyTorch's host allocator until the copy is done.
def offload_grad_to_host(param, host_grad, copy_stream):
    copy_stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(copy_stream):
        host_grad.copy_(param.grad, non_blocking=True)
        param.grad.record_stream(copy_stream)
    param.grad = None


# The consumers of an input-distribution result are a set of streams; a loop
# records the tensor on each of them. The source stream is ordered before the
# current one by an event, which makes it a stream of its own.
def lookup_consumers_unrecorded(requests, module, source_stream, target_stream):
    current = torch.cuda.current_stream()
    with torch.cuda.stream(source_stream):
        kjt = requests.pop("kjt").wait()
    current.wait_event(source_stream.record_event())
    if target_stream is not None:
        kjt.record_stream(target_stream)
    return module.compute(kjt)  # CHECK: [[@LINE]]:12: warning: 'kjt' is used on the current stream here and is still held when 'lookup_consumers_unrecorded' returns{{.*}}[xstream-pending-at-return]


def lookup_consumers_recorded(requests, module, source_stream, target_stream):
    current = torch.cuda.current_stream()
    with torch.cuda.stream(source_stream):
        kjt = requests.pop("kjt").wait()
    current.wait_event(source_stream.record_event())
    consumers = {s for s in (current, target_stream) if s is not None}
    consumers.discard(source_stream)
    for stream in consumers:
        kjt.record_stream(stream)
    return module.compute(kjt)


# A stream handed to a call the check does not know, while another stream
# is current, stays a stream: the wait for it that a helper makes next
# orders the read.
def wait_for_batch(batch, stream):
    if stream is None:
        return
    torch.cuda.current_stream().wait_stream(stream)


class StreamHandedToHooks:
    def __init__(self, hooks, device):
        self.hooks = hooks
        self._memcpy_stream = torch.get_device_module(device).Stream() if device.type == "cuda" else None
        self._dist_stream = torch.get_device_module(device).Stream() if device.type == "cuda" else None

    def step(self, loader):
        with torch.cuda.stream(self._memcpy_stream):
            batch = loader.next_batch().to("cuda", non_blocking=True)
        with torch.cuda.stream(self._dist_stream):
            self.hooks.note(self._memcpy_stream)
            wait_for_batch(batch, self._memcpy_stream)
            batch.record_stream(self._dist_stream)
            out = batch.sum()
        torch.cuda.current_stream().wait_stream(self._dist_stream)
        return out
