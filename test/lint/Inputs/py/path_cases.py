# Orderings that hold on some paths only, or that miss the use.
import contextlib

import torch


def wait_on_one_branch(side, eager):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
        done = side.record_event()
    if eager:
        torch.cuda.current_stream().wait_event(done)
    else:
        print("skipping the wait")
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def wait_on_both_branches(side, eager):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
        done = side.record_event()
    if eager:
        torch.cuda.current_stream().wait_event(done)
    else:
        torch.cuda.synchronize()
    del buf


def early_return_skips_wait(side, cheap):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    if cheap:
        return None  # CHECK: [[@LINE]]:9: warning: 'buf' is freed when 'early_return_skips_wait' returns on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]
    torch.cuda.current_stream().wait_stream(side)
    del buf
    return None


def recorded_before_the_use(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        done = side.record_event()
        buf.add_(1)
    torch.cuda.current_stream().wait_event(done)
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]
    # CHECK: [[@LINE-3]]:9: note: 'buf' is used on stream 'side' here


def two_consumers_one_recorded(first, second):
    buf = torch.empty(512, device="cuda")
    with torch.cuda.stream(first):
        buf.sum()
        first_done = first.record_event()
    with torch.cuda.stream(second):
        buf.mean()
    torch.cuda.current_stream().wait_event(first_done)
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'second' may still be using it{{.*}}[xstream-unordered-free]
    # CHECK: [[@LINE-3]]:9: note: 'buf' is used on stream 'second' here
    # CHECK-NOT: note:


def two_consumers_both_recorded(first, second):
    buf = torch.empty(512, device="cuda")
    with torch.cuda.stream(first):
        buf.sum()
        first_done = first.record_event()
    with torch.cuda.stream(second):
        buf.mean()
        second_done = second.record_event()
    current = torch.cuda.current_stream()
    current.wait_event(first_done)
    current.wait_event(second_done)
    del buf


def used_through_a_view(side):
    flat = torch.empty(4096, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    rows = flat.view(64, 64)
    head = rows[:8]
    with torch.cuda.stream(side):
        head.zero_()
    del rows, head
    del flat  # CHECK: [[@LINE]]:5: warning: 'flat' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]
    # CHECK: [[@LINE-3]]:9: note: 'flat' is used on stream 'side' here


def view_keeps_the_block(side):
    flat = torch.empty(4096, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    part = flat.narrow(0, 0, 128)
    with torch.cuda.stream(side):
        part.zero_()
    del flat  # the view still holds the block: not freed here
    torch.cuda.current_stream().wait_stream(side)
    return part.sum()


def late_wait(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    done = side.record_event()
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream before the current stream waits for its use on stream 'side' [xstream-free-before-wait]
    torch.cuda.current_stream().wait_event(done)
    # CHECK: [[@LINE-1]]:5: note: move this wait before the del
    # CHECK: [[@LINE-5]]:9: note: 'buf' is used on stream 'side' here, and the wait orders the current stream after it


def late_wait_in_loop(side, steps):
    done = None
    for _ in range(steps):
        buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            buf.add_(1)
            done = side.record_event()
        del buf  # CHECK: [[@LINE]]:9: warning: 'buf' is freed on the current stream before the current stream waits for its use on stream 'side' [xstream-free-before-wait]
        torch.cuda.current_stream().wait_event(done)


def helper_orders(stream, event):
    torch.cuda.current_stream().wait_event(event)


def wait_in_a_helper(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
        done = side.record_event()
    helper_orders(side, done)
    del buf


def optional_side_stream(use_side):
    # On the path without a side stream the work stays on the current stream.
    side = torch.cuda.Stream() if use_side else contextlib.nullcontext()
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with side:
        buf.add_(1)
    if use_side:
        torch.cuda.current_stream().wait_stream(side)
    del buf


def after_a_growing_tuple(side, extra):
    # A tuple that grows in a loop still reaches a fixpoint.
    args = ()
    for x in extra:
        args = (*args, x)
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(len(args))
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def after_a_self_referencing_swap(side, samples):
    # A tuple rebuilt from itself each round still reaches a fixpoint.
    for sample in samples:
        sample.first, sample.rest = sample.rest[0], (sample.first,)
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def returns_through_a_finally(side):
    # The finally runs before the function's locals go.
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    try:
        with torch.cuda.stream(side):
            buf.add_(1)
        return None
    finally:
        torch.cuda.current_stream().wait_stream(side)


def returns_through_a_finally_that_waits_too_little(side, other):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    try:
        with torch.cuda.stream(side):
            buf.add_(1)
        return None  # CHECK: [[@LINE]]:9: warning: 'buf' is freed when 'returns_through_a_finally_that_waits_too_little' returns{{.*}}[xstream-unordered-free]
    finally:
        torch.cuda.current_stream().wait_stream(other)
