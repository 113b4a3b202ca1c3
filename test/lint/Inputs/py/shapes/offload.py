# Activation offloading through saved-tensor hooks, followed across the calls
# autograd makes of one object: pack for each tensor the forward saves (a
# later call drops what an earlier one kept), unpack in the backward (the
# node reads what it hands back), the hooks unpack puts on the backward node
# and the callbacks it queues for the end of the backward, and the object's
# __exit__ around the forward. The state lives in dicts on self keyed by an
# id. Each bug is followed by its fixed twin, which must stay silent.
import torch
from torch.autograd.graph import saved_tensors_hooks


class KeepWindowUnwaited(saved_tensors_hooks):
    # The forward keeps each activation alive until its host copy is done;
    # a later save drops the older ones without waiting for their copies.
    def __init__(self):
        self.compute = torch.cuda.current_stream()
        self.mover = torch.cuda.Stream()
        self.on_host = {}
        self.alive = {}
        self.last = 0

        def save(activation):
            self.last += 1
            for key in list(self.alive.keys()):
                _, copied = self.alive[key]
                del self.alive[key]  # CHECK: [[@LINE]]:17: warning: 'self.alive[?]' is freed on the current stream before the current stream waits for its use on stream 'self.mover'{{.*}}[xstream-free-before-wait]
            self.mover.wait_stream(self.compute)
            with torch.cuda.stream(self.mover):
                host = torch.empty_like(activation, device="cpu", pin_memory=True)
                host.copy_(activation, non_blocking=True)
            self.on_host[self.last] = host
            self.alive[self.last] = (activation, self.mover.record_event())
            return self.last

        def load(key):
            host = self.on_host.pop(key)
            with torch.cuda.stream(self.mover):
                back = host.to("cuda", non_blocking=True)
            self.compute.wait_stream(self.mover)
            back.record_stream(self.compute)
            return back

        super().__init__(save, load)


class KeepWindow(saved_tensors_hooks):
    def __init__(self):
        self.compute = torch.cuda.current_stream()
        self.mover = torch.cuda.Stream()
        self.on_host = {}
        self.alive = {}
        self.last = 0

        def save(activation):
            self.last += 1
            for key in list(self.alive.keys()):
                _, copied = self.alive[key]
                self.compute.wait_event(copied)
                del self.alive[key]
            self.mover.wait_stream(self.compute)
            with torch.cuda.stream(self.mover):
                host = torch.empty_like(activation, device="cpu", pin_memory=True)
                host.copy_(activation, non_blocking=True)
            self.on_host[self.last] = host
            self.alive[self.last] = (activation, self.mover.record_event())
            return self.last

        def load(key):
            host = self.on_host.pop(key)
            with torch.cuda.stream(self.mover):
                back = host.to("cuda", non_blocking=True)
            self.compute.wait_stream(self.mover)
            back.record_stream(self.compute)
            return back

        super().__init__(save, load)


class ReloadUnwaited(saved_tensors_hooks):
    # The backward node reads the reloaded activation on the current stream;
    # unpack hands it back without the current stream waiting for the copy.
    # Elsewhere the object does make the current stream wait for the mover
    # (the node hook below): not in between.
    def __init__(self):
        self.compute = torch.cuda.current_stream()
        self.mover = torch.cuda.Stream()
        self.on_host = {}
        self.alive = {}

        def save(activation):
            self.mover.wait_stream(self.compute)
            with torch.cuda.stream(self.mover):
                host = activation.to("cpu", non_blocking=True)
            self.on_host[id(host)] = host
            self.alive[id(host)] = (activation, self.mover.record_event())
            return id(host)

        def load(key):
            host = self.on_host.pop(key)
            with torch.cuda.stream(self.mover):
                back = host.to("cuda", non_blocking=True)
            back.record_stream(self.compute)
            node = torch._C._current_autograd_node()

            def after_node(grad_inputs, grad_outputs):
                for k in list(self.alive.keys()):
                    _, copied = self.alive[k]
                    self.compute.wait_event(copied)
                    del self.alive[k]
                return grad_inputs

            node.register_hook(after_node)
            return back

        super().__init__(save, load)  # CHECK: [[@LINE]]:9: warning: 'tensor' is used on the current stream before its write on stream 'self.mover' is ordered before this use{{.*}}[xstream-use-before-ready]


class Reload(saved_tensors_hooks):
    def __init__(self):
        self.compute = torch.cuda.current_stream()
        self.mover = torch.cuda.Stream()
        self.on_host = {}
        self.alive = {}

        def save(activation):
            self.mover.wait_stream(self.compute)
            with torch.cuda.stream(self.mover):
                host = activation.to("cpu", non_blocking=True)
            self.on_host[id(host)] = host
            self.alive[id(host)] = (activation, self.mover.record_event())
            return id(host)

        def load(key):
            host = self.on_host.pop(key)
            with torch.cuda.stream(self.mover):
                back = host.to("cuda", non_blocking=True)
            self.compute.wait_stream(self.mover)
            back.record_stream(self.compute)
            node = torch._C._current_autograd_node()

            def after_node(grad_inputs, grad_outputs):
                for k in list(self.alive.keys()):
                    _, copied = self.alive[k]
                    self.compute.wait_event(copied)
                    del self.alive[k]
                return grad_inputs

            node.register_hook(after_node)
            return back

        super().__init__(save, load)


class NodeHookDropsUnwaited(saved_tensors_hooks):
    # What the forward still keeps is dropped by the hook on the backward
    # node (but the node's own) without waiting for the host copies (a
    # tensor still kept is handed back as it is, with no wait for the mover).
    def __init__(self):
        self.compute = torch.cuda.current_stream()
        self.mover = torch.cuda.Stream()
        self.on_host = {}
        self.alive = {}

        def save(activation):
            self.mover.wait_stream(self.compute)
            with torch.cuda.stream(self.mover):
                host = activation.to("cpu", non_blocking=True)
            self.on_host[id(host)] = host
            self.alive[id(host)] = (activation, self.mover.record_event())
            return id(host)

        def load(key):
            host = self.on_host.pop(key)
            if key in self.alive:
                back = self.alive[key][0]  # still on the device: no reload, no wait
            else:
                with torch.cuda.stream(self.mover):
                    back = host.to("cuda", non_blocking=True)
                self.compute.wait_stream(self.mover)
                back.record_stream(self.compute)

            def after_node(grad_inputs, grad_outputs):
                for k in [k for k in self.alive.keys() if k != key]:
                    del self.alive[k]  # CHECK: [[@LINE]]:21: warning: 'self.alive[?]' is freed on the current stream before the current stream waits for its use on stream 'self.mover'{{.*}}[xstream-free-before-wait]
                return grad_inputs

            torch._C._current_autograd_node().register_hook(after_node)
            return back

        super().__init__(save, load)


class NodeHookDrops(saved_tensors_hooks):
    def __init__(self):
        self.compute = torch.cuda.current_stream()
        self.mover = torch.cuda.Stream()
        self.on_host = {}
        self.alive = {}

        def save(activation):
            self.mover.wait_stream(self.compute)
            with torch.cuda.stream(self.mover):
                host = activation.to("cpu", non_blocking=True)
            self.on_host[id(host)] = host
            self.alive[id(host)] = (activation, self.mover.record_event())
            return id(host)

        def load(key):
            host = self.on_host.pop(key)
            if key in self.alive:
                back = self.alive[key][0]  # still on the device: no reload, no wait
            else:
                with torch.cuda.stream(self.mover):
                    back = host.to("cuda", non_blocking=True)
                self.compute.wait_stream(self.mover)
                back.record_stream(self.compute)

            def after_node(grad_inputs, grad_outputs):
                for k in [k for k in self.alive.keys() if k != key]:
                    _, copied = self.alive[k]
                    self.compute.wait_event(copied)
                    del self.alive[k]
                return grad_inputs

            torch._C._current_autograd_node().register_hook(after_node)
            return back

        super().__init__(save, load)


class EndOfBackwardDropsUnwaited(saved_tensors_hooks):
    # What the forward still keeps is dropped by a callback at the end of
    # the backward without waiting for the host copies (a tensor still kept
    # is handed back as it is, with no wait for the mover).
    def __init__(self):
        self.compute = torch.cuda.current_stream()
        self.mover = torch.cuda.Stream()
        self.on_host = {}
        self.alive = {}

        def save(activation):
            self.mover.wait_stream(self.compute)
            with torch.cuda.stream(self.mover):
                host = activation.to("cpu", non_blocking=True)
            self.on_host[id(host)] = host
            self.alive[id(host)] = (activation, self.mover.record_event())
            return id(host)

        def load(key):
            host = self.on_host.pop(key)

            def at_end():
                for k in list(self.alive.keys()):
                    del self.alive[k]  # CHECK: [[@LINE]]:21: warning: 'self.alive[?]' is freed on the current stream while stream 'self.mover' may still be using it{{.*}}[xstream-unordered-free]

            torch.autograd.variable.Variable._execution_engine.queue_callback(at_end)
            if key in self.alive:
                back = self.alive[key][0]  # still on the device: no reload, no wait
            else:
                with torch.cuda.stream(self.mover):
                    back = host.to("cuda", non_blocking=True)
                self.compute.wait_stream(self.mover)
                back.record_stream(self.compute)
            return back

        super().__init__(save, load)


class EndOfBackwardDrops(saved_tensors_hooks):
    def __init__(self):
        self.compute = torch.cuda.current_stream()
        self.mover = torch.cuda.Stream()
        self.on_host = {}
        self.alive = {}

        def save(activation):
            self.mover.wait_stream(self.compute)
            with torch.cuda.stream(self.mover):
                host = activation.to("cpu", non_blocking=True)
            self.on_host[id(host)] = host
            self.alive[id(host)] = (activation, self.mover.record_event())
            return id(host)

        def load(key):
            host = self.on_host.pop(key)

            def at_end():
                for k in list(self.alive.keys()):
                    _, copied = self.alive[k]
                    self.compute.wait_event(copied)
                    del self.alive[k]

            torch.autograd.variable.Variable._execution_engine.queue_callback(at_end)
            if key in self.alive:
                back = self.alive[key][0]  # still on the device: no reload, no wait
            else:
                with torch.cuda.stream(self.mover):
                    back = host.to("cuda", non_blocking=True)
                self.compute.wait_stream(self.mover)
                back.record_stream(self.compute)
            return back

        super().__init__(save, load)


class ExitClearsUnsynced(saved_tensors_hooks):
    # Leaving the with-block drops what the forward kept; the host waits for
    # the compute stream only, not for the copies on the mover. The compute
    # stream is a property read each time.
    def __init__(self):
        self.mover = torch.cuda.Stream()
        self.on_host = {}
        self.alive = {}

        def save(activation):
            self.mover.wait_stream(self.compute)
            with torch.cuda.stream(self.mover):
                host = activation.to("cpu", non_blocking=True)
            self.on_host[id(host)] = host
            self.alive[id(host)] = activation
            return id(host)

        def load(key):
            host = self.on_host.pop(key)
            with torch.cuda.stream(self.mover):
                back = host.to("cuda", non_blocking=True)
            self.compute.wait_stream(self.mover)
            back.record_stream(self.compute)
            return back

        super().__init__(save, load)

    @property
    def compute(self):
        return torch.cuda.current_stream()

    def __exit__(self, *args):
        self.compute.synchronize()
        self.alive.clear()  # CHECK: [[@LINE]]:9: warning: 'self.alive' is freed on the current stream before the current stream waits for its use on stream 'self.mover'{{.*}}[xstream-free-before-wait]
        return super().__exit__(*args)


class ExitClears(saved_tensors_hooks):
    def __init__(self):
        self.mover = torch.cuda.Stream()
        self.on_host = {}
        self.alive = {}

        def save(activation):
            self.mover.wait_stream(self.compute)
            with torch.cuda.stream(self.mover):
                host = activation.to("cpu", non_blocking=True)
            self.on_host[id(host)] = host
            self.alive[id(host)] = activation
            return id(host)

        def load(key):
            host = self.on_host.pop(key)
            with torch.cuda.stream(self.mover):
                back = host.to("cuda", non_blocking=True)
            self.compute.wait_stream(self.mover)
            back.record_stream(self.compute)
            return back

        super().__init__(save, load)

    @property
    def compute(self):
        return torch.cuda.current_stream()

    def __exit__(self, *args):
        self.compute.synchronize()
        self.mover.synchronize()
        self.alive.clear()
        return super().__exit__(*args)


class ReloadFlagUnrecorded(saved_tensors_hooks):
    # unpack hands back either the activation the forward still keeps or a
    # reload made on the mover; a flag tells the node hook which. When views
    # of the reload outlive the node, the hook drops the stash entry without
    # telling the allocator that the compute stream read it (the node read
    # it there): the mover's pool hands the block out again under that read.
    def __init__(self):
        self.compute = torch.cuda.current_stream()
        self.mover = torch.cuda.Stream()
        self.on_host = {}
        self.alive = {}
        self.reloads = {}
        self.read_done = {}

        def save(activation):
            self.mover.wait_stream(self.compute)
            with torch.cuda.stream(self.mover):
                host = activation.to("cpu", non_blocking=True)
            self.on_host[id(host)] = host
            self.alive[id(host)] = (activation, self.mover.record_event())
            return id(host)

        def load(key):
            host = self.on_host.pop(key)
            reloaded = True
            if key in self.alive:
                back = self.alive[key][0]
                reloaded = False
            else:
                with torch.cuda.stream(self.mover):
                    back = host.to("cuda", non_blocking=True)
                self.compute.wait_stream(self.mover)
                self.reloads[key] = back
            users = torch._C._storage_Use_Count(back.untyped_storage()._cdata)

            def after_node(grad_inputs, grad_outputs):
                if reloaded:
                    kept = self.reloads[key]
                    if torch._C._storage_Use_Count(kept.untyped_storage()._cdata) > users:
                        del self.reloads[key]  # CHECK: [[@LINE]]:25: warning: 'self.reloads[?]' is freed on stream 'self.mover' while the current stream may still be using it{{.*}}[xstream-unordered-free]
                    else:
                        self.read_done[key] = self.compute.record_event()
                return grad_inputs

            def at_end():
                for k in list(self.reloads.keys()):
                    self.mover.wait_event(self.read_done[k])
                    del self.reloads[k]

            torch._C._current_autograd_node().register_hook(after_node)
            torch.autograd.variable.Variable._execution_engine.queue_callback(at_end)
            return back

        super().__init__(save, load)


class ReloadFlagRecorded(saved_tensors_hooks):
    # The same, fixed: the entry dropped early is recorded on the compute
    # stream; the one kept waits for the node's read at the end. The flag
    # alone says which entries exist, and the end callback waits only where
    # an event was kept (`if k in self.read_done`), the hook only where the
    # entry is still there.
    def __init__(self):
        self.compute = torch.cuda.current_stream()
        self.mover = torch.cuda.Stream()
        self.on_host = {}
        self.alive = {}
        self.reloads = {}
        self.read_done = {}

        def save(activation):
            self.mover.wait_stream(self.compute)
            with torch.cuda.stream(self.mover):
                host = activation.to("cpu", non_blocking=True)
            self.on_host[id(host)] = host
            self.alive[id(host)] = (activation, self.mover.record_event())
            return id(host)

        def load(key):
            host = self.on_host.pop(key)
            reloaded = True
            if key in self.alive:
                back = self.alive[key][0]
                reloaded = False
            else:
                with torch.cuda.stream(self.mover):
                    back = host.to("cuda", non_blocking=True)
                self.compute.wait_stream(self.mover)
                self.reloads[key] = back
            users = torch._C._storage_Use_Count(back.untyped_storage()._cdata)

            def after_node(grad_inputs, grad_outputs):
                if reloaded:
                    if key in self.reloads:
                        kept = self.reloads[key]
                        if torch._C._storage_Use_Count(kept.untyped_storage()._cdata) > users:
                            kept.record_stream(self.compute)
                            del self.reloads[key]
                        else:
                            self.read_done[key] = self.compute.record_event()
                return grad_inputs

            def at_end():
                for k in list(self.reloads.keys()):
                    if k in self.read_done:
                        done = self.read_done[k]
                        self.mover.wait_event(done)
                    del self.reloads[k]

            torch._C._current_autograd_node().register_hook(after_node)
            torch.autograd.variable.Variable._execution_engine.queue_callback(at_end)
            return back

        super().__init__(save, load)
