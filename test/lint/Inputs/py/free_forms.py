# Each way a Python program frees a tensor's block, once unordered and once
# ordered after the other stream's use.
import torch


def consume(buf):
    return buf.sum()


def del_unordered(side):
    buf = torch.empty(1024, device="cuda")
    with torch.cuda.stream(side):
        consume(buf)
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it; nothing orders the current stream after that use [xstream-unordered-free]
    # CHECK: [[@LINE-2]]:9: note: 'buf' is used on stream 'side' here; record an event on stream 'side' after this use and make the current stream wait on it before the free


def del_ordered(side):
    buf = torch.empty(1024, device="cuda")
    with torch.cuda.stream(side):
        consume(buf)
    torch.cuda.current_stream().wait_stream(side)
    del buf


def rebind_unordered(side, steps):
    buf = torch.empty(1024, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.mul_(2)
    buf = None  # CHECK: [[@LINE]]:5: warning: 'buf' is freed by this assignment on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]
    return buf


def rebind_ordered(side):
    buf = torch.empty(1024, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.mul_(2)
        done = side.record_event()
    torch.cuda.current_stream().wait_event(done)
    buf = torch.ones(8, device="cuda")
    return buf


def rebind_in_loop_unordered(side, steps):
    for _ in range(steps):  # CHECK: [[@LINE]]:5: warning: 'scratch' is freed when 'rebind_in_loop_unordered' returns on the current stream{{.*}}[xstream-unordered-free]
        scratch = torch.empty(4096, device="cuda"); side.wait_stream(torch.cuda.current_stream())  # CHECK: [[@LINE]]:9: warning: 'scratch' is freed by this assignment on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]
        with torch.cuda.stream(side):
            scratch.copy_(torch.ones(4096, device="cuda"))


def rebind_in_loop_ordered(side, steps):
    for _ in range(steps):
        scratch = torch.empty(4096, device="cuda"); side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            scratch.copy_(torch.ones(4096, device="cuda"))
        torch.cuda.current_stream().wait_stream(side)


def resize_unordered(side):
    flat = torch.empty(1 << 20, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    keep = flat.view(1024, 1024)
    with torch.cuda.stream(side):
        keep.add_(1)
    flat.untyped_storage().resize_(0)  # CHECK: [[@LINE]]:5: warning: 'flat' is freed by resize_(0) on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]
    return keep


def resize_ordered(side):
    flat = torch.empty(1 << 20, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    keep = flat.view(1024, 1024)
    with torch.cuda.stream(side):
        keep.add_(1)
        side_done = torch.cuda.Event()
        side_done.record(side)
    torch.cuda.current_stream().wait_event(side_done)
    flat.untyped_storage().resize_(0)
    return keep


def scope_exit_unordered(side):
    staging = torch.empty(256, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        staging.fill_(3)
    print("enqueued")  # CHECK: [[@LINE]]:5: warning: 'staging' is freed when 'scope_exit_unordered' returns on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def scope_exit_ordered(side):
    staging = torch.empty(256, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        staging.fill_(3)
    side.synchronize()
    print("enqueued")


def scope_exit_returned(side):
    staging = torch.empty(256, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        staging.fill_(3)
    return staging


def scope_exit_stored(self_like, side):
    staging = torch.empty(256, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        staging.fill_(3)
    self_like.cache = staging


def freed_on_its_use_stream(side):
    # Allocated on side and used there only: nothing to order.
    with torch.cuda.stream(side):
        tmp = torch.empty(64, device="cuda")
        tmp.zero_()
        del tmp


def kept_by_a_callback(side, callbacks):
    # The lambda holds the tensor past the function.
    staging = torch.empty(256, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        staging.fill_(3)
    callbacks.append(lambda: staging.sum())
