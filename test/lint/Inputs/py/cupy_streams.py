# CuPy's stream API, each ordering with a twin where it misses the use.
# CuPy's arrays live on the device and are allocated on the current stream
# (`with stream:` makes a stream current); stream.record() records an event.
import cupy as cp


def record_wait_clean():
    side = cp.cuda.Stream(non_blocking=True)
    with side:
        buf = cp.empty(512)
        buf.fill(1)
    done = side.record()
    cp.cuda.get_current_stream().wait_event(done)
    with side:
        cp.cuda.get_current_stream().synchronize()


def consumer_reads_then_free():
    producer = cp.cuda.Stream(non_blocking=True)
    consumer = cp.cuda.Stream(non_blocking=True)
    with producer:
        params = cp.ones(1024)
    consumer.wait_event(producer.record())
    with consumer:
        out = params * 2
    del params  # CHECK: [[@LINE]]:5: warning: 'params' is freed on stream 'producer' while stream 'consumer' may still be using it{{.*}}[xstream-unordered-free]
    return out


def consumer_reads_then_stall():
    producer = cp.cuda.Stream(non_blocking=True)
    consumer = cp.cuda.Stream(non_blocking=True)
    with producer:
        params = cp.ones(1024)
    consumer.wait_event(producer.record())
    with consumer:
        out = params * 2
    producer.wait_event(consumer.record())
    del params
    consumer.synchronize()
    return out


def consumer_reads_then_event():
    producer = cp.cuda.Stream(non_blocking=True)
    consumer = cp.cuda.Stream(non_blocking=True)
    with producer:
        params = cp.ones(1024)
    consumer.wait_event(producer.record())
    done = cp.cuda.Event()
    with consumer:
        out = params * 2
    done.record(consumer)
    producer.wait_event(done)
    del params
    consumer.synchronize()
    return out


def consumer_reads_then_sync():
    producer = cp.cuda.Stream(non_blocking=True)
    consumer = cp.cuda.Stream(non_blocking=True)
    with producer:
        params = cp.ones(1024)
    consumer.wait_event(producer.record())
    with consumer:
        out = params * 2
    consumer.synchronize()
    del params
    return out


def consumer_reads_then_device_sync():
    producer = cp.cuda.Stream(non_blocking=True)
    consumer = cp.cuda.Stream(non_blocking=True)
    with producer:
        params = cp.ones(1024)
    consumer.wait_event(producer.record())
    with consumer:
        out = params * 2
    cp.cuda.runtime.deviceSynchronize()
    del params
    return out


def wait_on_the_wrong_stream():
    producer = cp.cuda.Stream(non_blocking=True)
    consumer = cp.cuda.Stream(non_blocking=True)
    with producer:
        params = cp.ones(1024)
    consumer.wait_event(producer.record())
    with consumer:
        out = params * 2
    consumer.wait_event(consumer.record())
    del params  # CHECK: [[@LINE]]:5: warning: 'params' is freed on stream 'producer' while stream 'consumer' may still be using it{{.*}}[xstream-unordered-free]
    consumer.synchronize()
    return out


def read_before_the_fill_is_waited():
    producer = cp.cuda.Stream(non_blocking=True)
    consumer = cp.cuda.Stream(non_blocking=True)
    with producer:
        params = cp.ones(1024)
    with consumer:
        out = params * 2  # CHECK: [[@LINE]]:15: warning: 'params' is used on stream 'consumer' before its write on stream 'producer' is ordered before this use{{.*}}[xstream-use-before-ready]
    consumer.synchronize()
    producer.synchronize()
    return out


def blocking_streams_follow_the_null_stream():
    # CuPy's Stream() without non_blocking=True synchronizes with the legacy
    # default stream, CuPy's current one: nothing here is unordered.
    x = cp.arange(1024)
    stream = cp.cuda.Stream()
    with stream:
        y = x * 2
    del x
    stream.synchronize()
    return y


def two_blocking_streams_unordered():
    # Two blocking streams are not ordered with each other: only the legacy
    # default stream's own work between them would order them.
    a = cp.cuda.Stream()
    b = cp.cuda.Stream()
    with a:
        x = cp.arange(1024)
    with b:
        y = x * 2  # CHECK: [[@LINE]]:13: warning: 'x' is used on stream 'b' before its write on stream 'a' is ordered before this use{{.*}}[xstream-use-before-ready]
    del x  # CHECK: [[@LINE]]:5: warning: 'x' is freed on stream 'a' while stream 'b' may still be using it{{.*}}[xstream-unordered-free]
    b.synchronize()
    return y


def two_blocking_streams_events():
    a = cp.cuda.Stream()
    b = cp.cuda.Stream()
    with a:
        x = cp.arange(1024)
    b.wait_event(a.record())
    with b:
        y = x * 2
    a.wait_event(b.record())
    del x
    return y


def legacy_work_orders_blocking_streams():
    # The legacy stream's work waits for every blocking stream's earlier
    # work, and every blocking stream's later work waits for it.
    a = cp.cuda.Stream()
    b = cp.cuda.Stream()
    with a:
        x = cp.arange(1024)
    marker = cp.zeros(1)
    with b:
        y = x * 2
    total = y + marker
    del x
    return total


def blocking_stream_passes_a_wait_on():
    # The legacy stream's later work waits for the blocking stream, which
    # waited for the side stream's use.
    side = cp.cuda.Stream(non_blocking=True)
    relay = cp.cuda.Stream()
    x = cp.arange(1024)
    side.wait_event(cp.cuda.get_current_stream().record())
    with side:
        y = x * 2
    relay.wait_event(side.record())
    del x
    return y


def non_blocking_stream_passes_nothing_on():
    side = cp.cuda.Stream(non_blocking=True)
    relay = cp.cuda.Stream(non_blocking=True)
    x = cp.arange(1024)
    side.wait_event(cp.cuda.get_current_stream().record())
    with side:
        y = x * 2
    relay.wait_event(side.record())
    del x  # CHECK: [[@LINE]]:5: warning: 'x' is freed on the current stream while stream 'side' may still be using it{{.*}}[xstream-unordered-free]
    relay.synchronize()
    return y


class BlockingWorker:
    # A blocking stream kept on the object, met in another method.
    def __init__(self):
        self.stream = cp.cuda.Stream()

    def step(self):
        x = cp.arange(1024)
        with self.stream:
            y = x * 2
        del x
        return y


class TwoBlockingStreams:
    def __init__(self):
        self.copy_stream = cp.cuda.Stream()
        self.compute_stream = cp.cuda.Stream()

    def step(self):
        with self.copy_stream:
            x = cp.arange(1024)
        with self.compute_stream:
            y = x * 2  # CHECK: [[@LINE]]:17: warning: 'x' is used on stream 'self.compute_stream' before its write on stream 'self.copy_stream' is ordered before this use{{.*}}[xstream-use-before-ready]
        return y  # CHECK: [[@LINE]]:9: warning: 'x' is freed when 'step' returns on stream 'self.copy_stream' while stream 'self.compute_stream' may still be using it{{.*}}[xstream-unordered-free]


def map_then_reduce_unordered(n):
    # Each map stream's result is summed on the reduce stream, which never
    # waits for the map streams (all of them blocking).
    reduce_stream = cp.cuda.Stream()
    map_streams = []
    for _ in range(n):
        map_streams.append(cp.cuda.Stream())
    parts = []
    for stream in map_streams:
        with stream:
            parts.append(cp.ones(1024) * 2)
    with reduce_stream:
        total = sum(parts)  # CHECK: [[@LINE]]:17: warning: 'parts[*]' is used on stream 'reduce_stream' before its write on the stream made at line {{[0-9]+}} is ordered before this use{{.*}}[xstream-use-before-ready]
    reduce_stream.synchronize()
    return total


def map_then_reduce(n):
    reduce_stream = cp.cuda.Stream()
    map_streams = []
    for _ in range(n):
        map_streams.append(cp.cuda.Stream())
    parts = []
    done = []
    for stream in map_streams:
        with stream:
            parts.append(cp.ones(1024) * 2)
        done.append(stream.record())
    for event in done:
        reduce_stream.wait_event(event)
    with reduce_stream:
        total = sum(parts)
    reduce_stream.synchronize()
    return total
