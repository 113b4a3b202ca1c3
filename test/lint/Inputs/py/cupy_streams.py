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
