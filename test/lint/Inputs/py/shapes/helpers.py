# Helpers another module of the package imports: each says by its body what
# it does to its arguments.
import torch


def copy_out_on(stream, dst, src):
    with torch.cuda.stream(stream):
        dst.copy_(src, non_blocking=True)


def order_after(stream):
    torch.cuda.current_stream().wait_stream(stream)


def on_stream(stream, fn, *args):
    with torch.cuda.stream(stream):
        return fn(*args)


def free_storage(t):
    t.untyped_storage().resize_(0)


def free_pair(first, second):
    first.untyped_storage().resize_(0)
    second.untyped_storage().resize_(0)


class Pool:
    def __init__(self, stream):
        self.stream = stream

    def consume(self, buf):
        with torch.cuda.stream(self.stream):
            buf.mul_(2)

    def settle(self):
        torch.cuda.current_stream().wait_stream(self.stream)
