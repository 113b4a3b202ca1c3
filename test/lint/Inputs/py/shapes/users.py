# The shapes real training code takes: tensors the function did not make,
# frees through attributes and containers, helpers in another module,
# functions passed in, nested functions, instances, streams from a list, and
# the two byte rules. Each bug is followed by its fixed twin, which must stay
# silent; the expectations sit next to the lines they are about.
import torch

from . import helpers
from .helpers import Pool, copy_out_on, free_pair, free_storage, on_stream, order_after


# --- tensors not made here ---------------------------------------------------

def grad_offload_unordered(p, host, copy_stream):
    with torch.cuda.stream(copy_stream):
        host.copy_(p.grad, non_blocking=True)
    p.grad = None  # CHECK: [[@LINE]]:5: warning: 'p.grad' is freed by this assignment on the current stream while stream 'copy_stream' may still be using it{{.*}}[xstream-unordered-free]


def grad_offload_recorded(p, host, copy_stream):
    with torch.cuda.stream(copy_stream):
        host.copy_(p.grad, non_blocking=True)
        p.grad.record_stream(copy_stream)
    p.grad = None


def grad_data_swap_unordered(param, bucket, side):
    with torch.cuda.stream(side):
        new_grad = bucket.narrow(0, 0, param.grad.numel()).view_as(param.grad)
        new_grad.copy_(param.grad, non_blocking=True)
    param.grad.data = new_grad  # CHECK: [[@LINE]]:5: warning: 'param.grad' is freed by this assignment on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def grad_data_swap_recorded(param, bucket, side):
    with torch.cuda.stream(side):
        new_grad = bucket.narrow(0, 0, param.grad.numel()).view_as(param.grad)
        new_grad.copy_(param.grad, non_blocking=True)
        param.grad.record_stream(side)
    param.grad.data = new_grad


def resize_inputs_unordered(side, *inputs):
    with torch.cuda.stream(side):
        for t in inputs:
            t.mul_(2)
    for t in inputs:
        t.untyped_storage().resize_(0)  # CHECK: [[@LINE]]:9: warning: 't' is freed by resize_(0) on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def resize_inputs_waited(side, *inputs):
    with torch.cuda.stream(side):
        for t in inputs:
            t.mul_(2)
    torch.cuda.current_stream().wait_stream(side)
    for t in inputs:
        t.untyped_storage().resize_(0)


def call_result_unordered(work, side):
    out = work.wait()
    with torch.cuda.stream(side):
        out.add_(1)
    del out  # CHECK: [[@LINE]]:5: warning: 'out' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def call_result_recorded(work, side):
    out = work.wait()
    with torch.cuda.stream(side):
        out.add_(1)
    out.record_stream(side)
    del out


class Stash:
    def __init__(self):
        self.d2h = torch.cuda.Stream()
        self.stash = {}
        self.buf = None

    def attribute_unordered(self, host):
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            host.copy_(self.buf, non_blocking=True)
        self.buf = None  # CHECK: [[@LINE]]:9: warning: 'self.buf' is freed by this assignment on the current stream while stream 'self.d2h' may still be using it{{.*}}[xstream-unordered-free]

    def attribute_waited(self, host):
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            host.copy_(self.buf, non_blocking=True)
        torch.cuda.current_stream().wait_stream(self.d2h)
        del self.buf

    def element_unordered(self, key, host):
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            host.copy_(self.stash[key], non_blocking=True)
        self.stash.pop(key)  # CHECK: [[@LINE]]:9: warning: 'self.stash[key]' is freed by this pop on the current stream while stream 'self.d2h' may still be using it{{.*}}[xstream-unordered-free]

    def element_recorded(self, key, host):
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            host.copy_(self.stash[key], non_blocking=True)
            self.stash[key].record_stream(self.d2h)
        self.stash.pop(key)

    def element_replaced_unordered(self, bufs, i, host):
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            host.copy_(bufs[i], non_blocking=True)
        bufs[i] = torch.empty_like(host, device="cuda")  # CHECK: [[@LINE]]:9: warning: 'bufs[i]' is freed by this assignment on the current stream while stream 'self.d2h' may still be using it{{.*}}[xstream-unordered-free]

    def element_replaced_waited(self, bufs, i, host):
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            host.copy_(bufs[i], non_blocking=True)
        self.d2h.synchronize()
        bufs[i] = torch.empty_like(host, device="cuda")


# --- the other half in another function --------------------------------------

def imported_helper_unordered(host, side):
    buf = torch.empty(1024, device="cuda")
    copy_out_on(side, host, buf)
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def imported_helper_ordered(host, side):
    buf = torch.empty(1024, device="cuda")
    copy_out_on(side, host, buf)
    order_after(side)
    del buf


def module_attribute_helper_unordered(host, side):
    buf = torch.empty(1024, device="cuda")
    helpers.copy_out_on(side, host, buf)
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def helper_frees_unordered(side):
    flat = torch.empty(1 << 16, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        flat.add_(1)
    free_storage(flat)  # CHECK: [[@LINE]]:5: warning: 'flat' is freed in 'free_storage', called here, on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]
    # CHECK: helpers.py:{{[0-9]+}}:{{[0-9]+}}: note: 'flat' is freed by resize_(0) here, inside 'free_storage'


# Two frees inside one helper: a warning for each at the call, each naming
# its free.
def helper_frees_pair_unordered(side):
    keys = torch.empty(1 << 16, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    values = torch.empty(1 << 16, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        keys.add_(1)
        values.add_(1)
    free_pair(keys, values)  # CHECK: [[@LINE]]:5: warning: 'keys' is freed in 'free_pair', called here,{{.*}}[xstream-unordered-free]
    # CHECK: helpers.py:{{[0-9]+}}:{{[0-9]+}}: note: 'keys' is freed by resize_(0) here, inside 'free_pair'
    # CHECK: users.py:[[@LINE-2]]:5: warning: 'values' is freed in 'free_pair', called here,{{.*}}[xstream-unordered-free]
    # CHECK: helpers.py:{{[0-9]+}}:{{[0-9]+}}: note: 'values' is freed by resize_(0) here, inside 'free_pair'


def helper_frees_pair_ordered(side):
    keys = torch.empty(1 << 16, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    values = torch.empty(1 << 16, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        keys.add_(1)
        values.add_(1)
    order_after(side)
    free_pair(keys, values)


def helper_frees_ordered(side):
    flat = torch.empty(1 << 16, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        flat.add_(1)
    order_after(side)
    free_storage(flat)


def scale(t):
    t.mul_(2)


def passed_function_unordered(side):
    buf = torch.empty(256, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    on_stream(side, scale, buf)
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def passed_function_recorded(side):
    buf = torch.empty(256, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    on_stream(side, scale, buf)
    buf.record_stream(side)
    del buf


def nested_function_unordered(side):
    buf = torch.empty(256, device="cuda"); side.wait_stream(torch.cuda.current_stream())

    def consume():
        with torch.cuda.stream(side):
            buf.mul_(3)

    consume()
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def nested_function_ordered(side):
    buf = torch.empty(256, device="cuda"); side.wait_stream(torch.cuda.current_stream())

    def consume():
        with torch.cuda.stream(side):
            buf.mul_(3)

    consume()
    side.synchronize()
    del buf


def lambda_unordered(side):
    buf = torch.empty(256, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    consume = lambda b: on_stream(side, scale, b)  # noqa: E731
    consume(buf)
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def lambda_ordered(side):
    buf = torch.empty(256, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    consume = lambda b: on_stream(side, scale, b)  # noqa: E731
    consume(buf)
    order_after(side)
    del buf


def instance_unordered(side):
    pool = Pool(side)
    buf = torch.empty(256, device="cuda"); pool.stream.wait_stream(torch.cuda.current_stream())
    pool.consume(buf)
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'pool.stream' may still be using it{{.*}}[xstream-unordered-free]


def instance_settled(side):
    pool = Pool(side)
    buf = torch.empty(256, device="cuda"); pool.stream.wait_stream(torch.cuda.current_stream())
    pool.consume(buf)
    pool.settle()
    del buf


def stream_from_list_unordered(streams, i):
    buf = torch.empty(256, device="cuda"); streams[i].wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(streams[i]):
        buf.mul_(2)
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'streams[i]' may still be using it{{.*}}[xstream-unordered-free]


def stream_from_list_waited(streams, i):
    buf = torch.empty(256, device="cuda"); streams[i].wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(streams[i]):
        buf.mul_(2)
    torch.cuda.current_stream().wait_stream(streams[i])
    del buf


def operator_output_at_return_unordered(a, b, side):
    both = torch.stack((a, b))
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        both.mul_(2)
    return a.sum(1)  # CHECK: [[@LINE]]:5: warning: 'both' is freed when 'operator_output_at_return_unordered' returns on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def operator_output_at_return_ordered(a, b, side):
    both = torch.stack((a, b))
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        both.mul_(2)
    torch.cuda.current_stream().wait_stream(side)
    return a.sum(1)


def guarded_record(p, host, copy_stream, on_side):
    # An ordering under a guard that tests the platform or a flag is taken
    # as made.
    with torch.cuda.stream(copy_stream):
        host.copy_(p.grad, non_blocking=True)
        if on_side:
            p.grad.record_stream(copy_stream)
    p.grad = None


# --- the byte rules --------------------------------------------------------------

def prefetch_read_before_ready(model, cpu_batch, copy_stream):
    with torch.cuda.stream(copy_stream):
        batch = cpu_batch.to("cuda", non_blocking=True)
    return model(batch)  # CHECK: [[@LINE]]:12: warning: 'batch' is used on the current stream before its write on stream 'copy_stream' is ordered before this use{{.*}}[xstream-use-before-ready]


def prefetch_waited(model, cpu_batch, copy_stream):
    with torch.cuda.stream(copy_stream):
        batch = cpu_batch.to("cuda", non_blocking=True)
    torch.cuda.current_stream().wait_stream(copy_stream)
    return model(batch)


def side_reads_unwritten_input(x, side):
    y = x.mul(2)
    with torch.cuda.stream(side):
        total = y.sum()  # CHECK: [[@LINE]]:17: warning: 'y' is used on stream 'side' before its write on the current stream is ordered before this use{{.*}}[xstream-use-before-ready]
    torch.cuda.current_stream().wait_stream(side)
    return total


def side_waits_for_input(x, side):
    y = x.mul(2)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        total = y.sum()
    torch.cuda.current_stream().wait_stream(side)
    return total


def refill_while_read(staging, fresh, side, model):
    with torch.cuda.stream(side):
        out = model(staging)
    staging.copy_(fresh)  # CHECK: [[@LINE]]:5: warning: 'staging' is written on the current stream while stream 'side' may still be using it{{.*}}[xstream-write-after-read]
    return out


def refill_after_event(staging, fresh, side, model):
    with torch.cuda.stream(side):
        out = model(staging)
        done = side.record_event()
    torch.cuda.current_stream().wait_event(done)
    staging.copy_(fresh)
    return out
