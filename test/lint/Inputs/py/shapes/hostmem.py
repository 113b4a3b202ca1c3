# Host memory and loops: a pinned buffer made with .pin_memory() is host
# memory, a blocking copy into it is finished when it returns, an in-place
# operator on it runs on the host, enumerate() and zip() bind each name to
# its own part, and `x.attr *= k` keeps naming what it scaled. An element
# assignment of a host tensor (`w[i] = w[i].pin_memory()`) is finished when
# the statement is (into a host tensor the host copies it; into a device
# tensor PyTorch waits for its copy), and one into a value an isinstance
# test said is a list fills a slot. Each bug is followed by its fixed twin,
# which must stay silent.
import torch

offload_stream = torch.cuda.Stream()


# The optimizer state is copied out to a pinned buffer kept beside it; the
# offload stream never waits for the step that wrote the state.
def offload_state_unwaited(state, key):
    host_key = key + "_host"
    if host_key not in state:
        state[host_key] = torch.empty_like(state[key], device="cpu").pin_memory()
    with torch.cuda.stream(offload_stream):
        state[host_key].copy_(state[key], non_blocking=True)  # CHECK: [[@LINE]]:9: warning: 'state[key]' is used on stream 'offload_stream' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
        state[key].record_stream(offload_stream)
    return offload_stream.record_event()


def offload_state_waited(state, key):
    host_key = key + "_host"
    if host_key not in state:
        state[host_key] = torch.empty_like(state[key], device="cpu").pin_memory()
    offload_stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(offload_stream):
        state[host_key].copy_(state[key], non_blocking=True)
        state[key].record_stream(offload_stream)
    return offload_stream.record_event()


# The host reads a pinned copy the side stream has not finished; a blocking
# copy, an index and a host-side fill are fine.
def checksum_unsynced(device_tensor):
    pinned = torch.empty(device_tensor.shape, device="cpu").pin_memory()
    offload_stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(offload_stream):
        pinned.copy_(device_tensor, non_blocking=True)
    device_tensor.record_stream(offload_stream)
    return pinned.sum().item()  # CHECK: [[@LINE]]:12: warning: 'pinned' is read by the host before its write on stream 'offload_stream' is finished{{.*}}[xstream-use-before-ready]


def checksum_blocking(device_tensor):
    pinned = torch.empty(device_tensor.shape, device="cpu").pin_memory()
    pinned.copy_(device_tensor)
    return pinned.sum().item()


def copy_out_all(tensors):
    offload_stream.wait_stream(torch.cuda.current_stream())
    pinned = [torch.empty(t.shape, device="cpu", pin_memory=True) for t in tensors]
    for p in pinned:
        p.zero_()
    sizes = []
    with torch.cuda.stream(offload_stream):
        for i, (p, t) in enumerate(zip(pinned, tensors)):
            p.copy_(t, non_blocking=True)
            t.record_stream(offload_stream)
            sizes.append(int(i))
    offload_stream.synchronize()
    return pinned, sizes


class GradBuckets:
    def __init__(self, buckets):
        self.buckets = buckets
        self.comm_stream = torch.cuda.Stream()

    # Scaled in place on the current stream, then reduced on the
    # communication stream, which does not wait for the scaling.
    def reduce_unwaited(self, group):
        for bucket in self.buckets:
            bucket.grad_data *= bucket.scale
        with torch.cuda.stream(self.comm_stream):
            for idx, bucket in enumerate(self.buckets):
                torch.distributed.all_reduce(bucket.grad_data, group=group)  # CHECK: [[@LINE]]:17: warning: 'self.buckets[*].grad_data' is used on stream 'self.comm_stream' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
        torch.cuda.current_stream().wait_stream(self.comm_stream)


class GradBucketsWaited:
    def __init__(self, buckets):
        self.buckets = buckets
        self.comm_stream = torch.cuda.Stream()

    def reduce_waited(self, group):
        for bucket in self.buckets:
            bucket.grad_data *= bucket.scale
        self.comm_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.comm_stream):
            for idx, bucket in enumerate(self.buckets):
                torch.distributed.all_reduce(bucket.grad_data, group=group)
        torch.cuda.current_stream().wait_stream(self.comm_stream)


# Gradients copied out to host buffers kept per parameter, the gradient read
# through getattr() with a default; the copy stream does not wait for the
# backward that wrote them.
class HostGradCopies:
    def __init__(self):
        self.d2h_stream = torch.cuda.Stream()
        self.cpu_grad_of = {}

    def copy_out_unwaited(self, params):
        with torch.cuda.stream(self.d2h_stream):
            for p in params:
                grad = getattr(p, "main_grad", p.grad)
                self.cpu_grad_of[p].data.copy_(grad, non_blocking=True)  # CHECK: [[@LINE]]:17: warning: 'params[*].grad' is used on stream 'self.d2h_stream' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
        return self.d2h_stream.record_event()


class HostGradCopiesWaited(HostGradCopies):
    def copy_out_waited(self, params):
        self.d2h_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h_stream):
            for p in params:
                grad = getattr(p, "main_grad", p.grad)
                self.cpu_grad_of[p].data.copy_(grad, non_blocking=True)
        return self.d2h_stream.record_event()


# The device parameters reached through a map from their host copies: a
# name that says both memories says the one it ends with (the map's values
# are the device's), and a subscript's key says nothing. The copy stream
# does not wait for the backward that wrote their gradients.
class HostCopyToDeviceParam:
    def __init__(self):
        self.d2h_stream = torch.cuda.Stream()
        self.cpu_copy_to_gpu_param = {}
        self.cpu_grad_of = {}

    def copy_out_unwaited(self):
        with torch.cuda.stream(self.d2h_stream):
            for host_param in list(self.cpu_grad_of):
                device_param = self.cpu_copy_to_gpu_param[host_param]
                self.cpu_grad_of[host_param].copy_(device_param.grad, non_blocking=True)  # CHECK: [[@LINE]]:17: warning: 'self.cpu_copy_to_gpu_param[host_param].grad' is used on stream 'self.d2h_stream' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
        return self.d2h_stream.record_event()


class HostCopyToDeviceParamWaited(HostCopyToDeviceParam):
    def copy_out_waited(self):
        self.d2h_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h_stream):
            for host_param in list(self.cpu_grad_of):
                device_param = self.cpu_copy_to_gpu_param[host_param]
                self.cpu_grad_of[host_param].copy_(device_param.grad, non_blocking=True)
        return self.d2h_stream.record_event()


# The other way round: a map from device tensors to their host copies holds
# host memory, filled by the host (a loader's batch), which the copy to the
# device on a side stream needs no wait for.
class DeviceToHostCopy:
    def __init__(self):
        self.h2d_stream = torch.cuda.Stream()
        self.gpu_param_to_cpu_copy = {}

    def upload(self, params):
        with torch.cuda.stream(self.h2d_stream):
            for p in params:
                p.data.copy_(self.gpu_param_to_cpu_copy[p], non_blocking=True)
        return self.h2d_stream.record_event()


# A copy into a destination the check does not know (a host buffer made on
# first use only, its pinning left to a flag) still reads its source on the
# current stream: the gradients the backward wrote, which the copy stream
# does not wait for. The optimizer then steps its inner optimizers
# (`opt.step(closure)` inside its own `step`, also in its subclass's): a
# call of another object's step, no caller of this one that could have
# waited first.
class LazyHostGrads:
    def __init__(self, optimizers, pin_grads):
        self.d2h_stream = torch.cuda.Stream()
        self.host_optimizers = optimizers
        self.host_to_gpu_param = {}
        self.host_grads = {}
        self.pin_grads = pin_grads
        self.copied = {}

    def _copy_grads(self):
        for opt in self.host_optimizers:
            for group in opt.param_groups:
                for host_param in group["params"]:
                    gpu_param = self.host_to_gpu_param[host_param]
                    if host_param not in self.host_grads:
                        self.host_grads[host_param] = torch.empty(host_param.shape, pin_memory=self.pin_grads,
                                                                  device="cpu")
                    self.host_grads[host_param].copy_(gpu_param.grad, non_blocking=True)
            self.copied[opt] = self.d2h_stream.record_event()

    def step(self, closure=None):
        with torch.cuda.stream(self.d2h_stream):
            self._copy_grads()  # CHECK: [[@LINE]]:13: warning: 'self.host_to_gpu_param[host_param].grad' is used on stream 'self.d2h_stream' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
        for opt in self.host_optimizers:
            self.copied.pop(opt).synchronize()
            opt.step(closure)


class LazyHostGradsWaited(LazyHostGrads):
    def step(self, closure=None):
        self.d2h_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h_stream):
            self._copy_grads()
        for opt in self.host_optimizers:
            self.copied.pop(opt).synchronize()
            opt.step(closure)


# Adapters loaded or pinned in place: each entry holds a list of tensors or
# one host tensor. Nothing here is a copy the host must wait for.
def load_adapters(model, load):
    for adapter in model.adapters.values():
        if isinstance(adapter.down, list):
            for index in range(len(adapter.down)):
                if adapter.down[index] is None:
                    continue
                adapter.down[index] = load(index)
        else:
            adapter.down = adapter.down.pin_memory()


def pin_pairs(model):
    for pair in model.pairs.values():
        if isinstance(pair.first, list):
            for index in range(len(pair.first)):
                if pair.first[index] is None:
                    continue
                pair.second[index] = pair.second[index].pin_memory()
        else:
            pair.second = pair.second.pin_memory()


# A copy from the device into each host buffer, asynchronous, then the host
# reads the buffer to pin it.
def repin_after_copy(host_bufs, dev):
    for index in range(len(host_bufs)):
        host_bufs[index].copy_(dev[index], non_blocking=True)
        host_bufs[index] = host_bufs[index].pin_memory()  # CHECK: [[@LINE]]:28: warning: 'host_bufs[index]' is read by the host before its write on the current stream is finished{{.*}}[xstream-use-before-ready]


def repin_after_copy_synchronized(host_bufs, dev):
    for index in range(len(host_bufs)):
        host_bufs[index].copy_(dev[index], non_blocking=True)
        torch.cuda.current_stream().synchronize()
        host_bufs[index] = host_bufs[index].pin_memory()


class StaticBatchLoader:
    """Stages a caller's batch into device buffers on its own stream. A clone
    sent straight to the device (`batch.clone().detach().cuda()`) copies what
    its author takes for host data, as `batch.to(device)` does: no device
    write of the caller's to wait for. A clone that stays where it is reads
    the caller's device tensor on the side stream, which never waited for
    the current stream."""

    def __init__(self):
        self.stream = torch.cuda.Stream()

    def stage_host_batch(self, batch):
        with torch.cuda.stream(self.stream):
            staged = batch.clone().detach().cuda()
        torch.cuda.current_stream().wait_stream(self.stream)
        return staged

    def stage_device_batch(self, batch):
        with torch.cuda.stream(self.stream):
            staged = batch.clone().detach()  # CHECK: [[@LINE]]:22: warning: 'batch' is used on stream 'self.stream' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
        torch.cuda.current_stream().wait_stream(self.stream)
        return staged


def pinned_sum_unsynced(dev: torch.Tensor):
    # `pin_memory=True` without `device=`: a pinned host buffer all the same.
    host = torch.empty(dev.shape, pin_memory=True)
    host.copy_(dev, non_blocking=True)
    total = host.sum()  # CHECK: [[@LINE]]:13: warning: 'host' is read by the host before its write on the current stream is finished{{.*}}[xstream-use-before-ready]
    torch.cuda.synchronize()
    return total


def pinned_sum_synced(dev: torch.Tensor):
    host = torch.empty(dev.shape, pin_memory=True)
    host.copy_(dev, non_blocking=True)
    torch.cuda.synchronize()
    return host.sum()

