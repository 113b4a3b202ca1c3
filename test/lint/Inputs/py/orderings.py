# Each way to order the freeing stream (or the host) after a use on another
# stream, with a twin where the ordering misses the use.
import torch
import torch.distributed as dist


def event_wait_clean(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    done = side.record_event()
    torch.cuda.current_stream().wait_event(done)
    del buf


def event_wait_wrong_stream(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    done = side.record_event()
    side.wait_event(done)
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def event_record_clean(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    done = torch.cuda.Event()
    with torch.cuda.stream(side):
        buf.add_(1)
    done.record(side)
    torch.cuda.current_stream().wait_event(done)
    del buf


def event_record_on_current(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    done = torch.cuda.Event()
    with torch.cuda.stream(side):
        buf.add_(1)
    done.record()
    torch.cuda.current_stream().wait_event(done)
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def wait_stream_clean(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    torch.cuda.current_stream().wait_stream(side)
    del buf


def wait_stream_reversed(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    side.wait_stream(torch.cuda.current_stream())
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def record_stream_clean(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    buf.record_stream(side)
    del buf


def record_stream_other(side, other):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    buf.record_stream(other)
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def device_sync_clean(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    torch.cuda.synchronize()
    del buf


def device_sync_after_free(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]
    torch.cuda.synchronize()


def stream_sync_clean(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    side.synchronize()
    del buf


def stream_sync_wrong_stream(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    torch.cuda.current_stream().synchronize()
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def event_sync_clean(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
        done = torch.cuda.current_stream().record_event()
    done.synchronize()
    del buf


def event_sync_recorded_elsewhere(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    done = torch.cuda.current_stream().record_event()
    done.synchronize()
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def query_loop_clean(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    done = side.record_event()
    while not done.query():
        pass
    del buf


def query_once(side):
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    done = side.record_event()
    if not done.query():
        print("still running")
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]


def work_wait_clean(side, template):
    buf = torch.empty_like(template)
    with torch.cuda.stream(side):
        out = buf * 2
        work = dist.all_reduce(out, async_op=True)
    work.wait()  # the current stream waits for the collective, issued on side after the use
    del buf
    return out


def work_never_waited(side, template):
    buf = torch.empty_like(template)
    with torch.cuda.stream(side):
        out = buf * 2
        work = dist.all_reduce(out, async_op=True)
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]
    return out, work


def waited_by_a_stream_it_cannot_name(side, streams):
    # The waiting stream is unknown here: it is trusted to be the right one.
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
        done = side.record_event()
    streams[0].wait_event(done)
    del buf


def yielded(side):
    # A yielded tensor belongs to the consumer of the generator.
    buf = torch.empty(512, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    yield buf


def freed_on_the_using_stream(side):
    # Allocated on side, used on the current stream that side then waits for.
    with torch.cuda.stream(side):
        buf = torch.empty(512, device="cuda")
    torch.cuda.current_stream().wait_stream(side)
    buf.add_(1)
    side.wait_stream(torch.cuda.current_stream())
    del buf


class Prefetcher:
    """Streams kept on self."""

    def __init__(self):
        self.copy_stream = torch.cuda.Stream()

    def prefetch_clean(self, host):
        with torch.cuda.stream(self.copy_stream):
            dev = host.to("cuda", non_blocking=True)
        torch.cuda.current_stream().wait_stream(self.copy_stream)
        out = dev * 2
        self.copy_stream.wait_stream(torch.cuda.current_stream())
        del dev
        return out

    def prefetch_buggy(self, host):
        with torch.cuda.stream(self.copy_stream):
            dev = host.to("cuda", non_blocking=True)
        torch.cuda.current_stream().wait_stream(self.copy_stream)
        out = dev * 2
        del dev  # CHECK: [[@LINE]]:9: warning: 'dev' is freed on stream 'self.copy_stream' while the current stream may still be using it; nothing orders stream 'self.copy_stream' after that use [xstream-unordered-free]
        return out


def host_float_clean(side):
    # float() copies the sum to the host and waits for the current stream,
    # as .item() does: the host is after the sum's read of buf.
    with torch.cuda.stream(side):
        buf = torch.ones(512, device="cuda")
    torch.cuda.current_stream().wait_stream(side)
    total = float(buf.sum())
    del buf
    return total


def host_abs_not_a_wait(side):
    # abs() of a device tensor computes on the device: the host waits for
    # nothing.
    with torch.cuda.stream(side):
        buf = torch.ones(512, device="cuda")
    torch.cuda.current_stream().wait_stream(side)
    total = abs(buf.sum())
    del buf  # CHECK: [[@LINE]]:5: warning: 'buf' is freed on stream 'side' while the current stream may still be using it{{.*}}[xstream-unordered-free]
    return total


def wait_on_each_recorded_event(n, src):
    # Each side stream's result is waited for through the event recorded
    # after it; the loop of waits runs once per event, so a list of results
    # is never left unwaited by it.
    reduce_stream = torch.cuda.Stream()
    side_streams = [torch.cuda.Stream() for _ in range(n)]
    parts = []
    done = []
    for stream in side_streams:
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            parts.append(src * 2)
        done.append(stream.record_event())
    for event in done:
        reduce_stream.wait_event(event)
    with torch.cuda.stream(reduce_stream):
        total = sum(parts)
    reduce_stream.synchronize()
    return total


def wait_on_each_event_of_another_list(n, src):
    reduce_stream = torch.cuda.Stream()
    side_streams = [torch.cuda.Stream() for _ in range(n)]
    parts = []
    done = []
    other = []
    for stream in side_streams:
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            parts.append(src * 2)
        done.append(stream.record_event())
        other.append(reduce_stream.record_event())  # the waiting stream's own
    for event in other:
        reduce_stream.wait_event(event)
    with torch.cuda.stream(reduce_stream):
        total = sum(parts)  # CHECK: [[@LINE]]:17: warning: 'parts[*]' is used on stream 'reduce_stream' before its write on the stream made at line {{[0-9]+}} is ordered before this use{{.*}}[xstream-use-before-ready]
    reduce_stream.synchronize()
    return total
