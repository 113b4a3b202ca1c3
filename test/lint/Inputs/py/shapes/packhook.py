# A saved-tensor pack hook copies the activation it is handed to the host
# on a side stream. Autograd calls it right after the forward wrote that
# activation, so no other method of the object can have made the side
# stream wait in between: the waits the object makes elsewhere (for its
# reloads) do not order this copy. Each bug is followed by its fixed twin,
# which must stay silent.
import torch
from torch.autograd.graph import saved_tensors_hooks


class HostStashUnwaited(saved_tensors_hooks):
    def __init__(self):
        self.compute = torch.cuda.current_stream()
        self.mover = torch.cuda.Stream()
        self.on_host = {}
        self.next_key = 0

        def stash(activation):
            self.next_key += 1
            with torch.cuda.stream(self.mover):
                host = torch.empty_like(activation, device="cpu", pin_memory=True)
                host.copy_(activation, non_blocking=True)  # CHECK: [[@LINE]]:17: warning: 'activation' is used on stream 'self.mover' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
            self.on_host[self.next_key] = (host, activation, self.mover.record_event())
            return self.next_key

        def fetch(key):
            host, activation, copied = self.on_host.pop(key)
            self.compute.wait_event(copied)
            del activation
            self.mover.wait_stream(self.compute)
            with torch.cuda.stream(self.mover):
                back = host.to("cuda", non_blocking=True)
            self.compute.wait_stream(self.mover)
            return back

        super().__init__(stash, fetch)


class HostStash(saved_tensors_hooks):
    def __init__(self):
        self.compute = torch.cuda.current_stream()
        self.mover = torch.cuda.Stream()
        self.on_host = {}
        self.next_key = 0

        def stash(activation):
            self.next_key += 1
            self.mover.wait_stream(self.compute)
            with torch.cuda.stream(self.mover):
                host = torch.empty_like(activation, device="cpu", pin_memory=True)
                host.copy_(activation, non_blocking=True)
            self.on_host[self.next_key] = (host, activation, self.mover.record_event())
            return self.next_key

        def fetch(key):
            host, activation, copied = self.on_host.pop(key)
            self.compute.wait_event(copied)
            del activation
            self.mover.wait_stream(self.compute)
            with torch.cuda.stream(self.mover):
                back = host.to("cuda", non_blocking=True)
            self.compute.wait_stream(self.mover)
            return back

        super().__init__(stash, fetch)
