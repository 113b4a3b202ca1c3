# Two ways a function's other half is reached. A helper handed an optimizer
# state dict and a key copies that entry out on a copy stream; its caller
# deletes the entry right after the call, under the name the caller gives
# it (`opt_state[name]`, `entries[task[2]]` of `entries = opt.state[p]`),
# which is the helper's `state[key]`. A base class's method reduces gradients on a side stream and
# then calls `self.release(params)`; a subclass overrides `release` to drop
# each gradient, and on an instance of that subclass the base method runs
# the override. Each bug is followed by its fixed twin, which must stay
# silent.
import torch

copy_stream = torch.cuda.Stream()


def offload_entry(state, key):
    host = torch.empty_like(state[key], device="cpu").pin_memory()
    copy_stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(copy_stream):
        host.copy_(state[key], non_blocking=True)  # CHECK: [[@LINE]]:9: warning: 'state[key]' is used on stream 'copy_stream' here and is still held when 'offload_entry' returns{{.*}}[xstream-pending-at-return]
    return host


def offload_entry_recorded(state, key):
    host = torch.empty_like(state[key], device="cpu").pin_memory()
    copy_stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(copy_stream):
        host.copy_(state[key], non_blocking=True)
        state[key].record_stream(copy_stream)
    return host


def offload_and_drop(opt_state, name, hosts):
    hosts[name] = offload_entry(opt_state, name)
    del opt_state[name]  # CHECK: [[@LINE]]:5: warning: 'opt_state[name]' is freed on the current stream while stream 'copy_stream' may still be using it{{.*}}[xstream-unordered-free]


def offload_and_drop_recorded(opt_state, name, hosts):
    hosts[name] = offload_entry_recorded(opt_state, name)
    del opt_state[name]


def offload_task(optimizer, task, hosts):
    entries = optimizer.state[task[1]]
    hosts[task] = offload_entry(entries, task[2])
    del entries[task[2]]  # CHECK: [[@LINE]]:5: warning: 'optimizer.state[task[1]][task[2]]' is freed on the current stream while stream 'copy_stream' may still be using it{{.*}}[xstream-unordered-free]


def offload_task_recorded(optimizer, task, hosts):
    entries = optimizer.state[task[1]]
    hosts[task] = offload_entry_recorded(entries, task[2])
    del entries[task[2]]


class GradReducer:
    def __init__(self):
        self.reduce_stream = torch.cuda.Stream()

    def reduce(self, params, flat):
        self.reduce_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.reduce_stream):
            for p in params:
                flat.add_(p.grad.view(-1))
            self.release(params)  # CHECK: [[@LINE]]:13: warning: 'params[*].grad' is freed in 'release', called here, on the current stream before the current stream waits for its use on stream 'self.reduce_stream' [xstream-free-before-wait]
        torch.cuda.current_stream().wait_stream(self.reduce_stream)

    def release(self, params):
        for p in params:
            p.grad.record_stream(torch.cuda.current_stream())
            p.grad = None


class DroppingReducer(GradReducer):
    def release(self, params):
        for p in params:
            p.grad = None


class RecordingReducer(GradReducer):
    def release(self, params):
        for p in params:
            if p.grad is not None:
                p.grad.record_stream(torch.cuda.current_stream())
            p.grad = None
