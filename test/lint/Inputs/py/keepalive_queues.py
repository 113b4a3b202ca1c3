# Keepalives: the previous buffers stay referenced, with the events recorded
# after their last use, and each is dropped only after the producer waits.
import collections
from typing import NamedTuple, Optional

import torch


def produce(stream, n):
    with torch.cuda.stream(stream):
        out = torch.empty(n, device="cuda")
        out.normal_()
    return out


def depth_one(producer, steps):
    consumer = torch.cuda.current_stream()
    held, held_done = None, None
    total = []
    for _ in range(steps):
        buf = produce(producer, 1024)
        consumer.wait_stream(producer)
        total.append(buf.sum())
        if held is not None:
            producer.wait_event(held_done)
        held, held_done = buf, consumer.record_event()
        del buf
    if held is not None:
        producer.wait_event(held_done)
    return total


def depth_one_no_wait(producer, steps):
    consumer = torch.cuda.current_stream()
    held, held_done = None, None
    total = []
    for _ in range(steps):
        buf = produce(producer, 1024)
        consumer.wait_stream(producer)
        total.append(buf.sum())
        held, held_done = buf, consumer.record_event()  # CHECK: [[@LINE]]:9: warning: 'held' is freed by this assignment on stream 'producer' before stream 'producer' waits for its use on the current stream [xstream-free-before-wait]
    # CHECK: [[@LINE+1]]:5: note: move this wait before the free
    producer.wait_event(held_done)
    return total


def depth_two(producer, steps):
    consumer = torch.cuda.current_stream()
    in_flight = collections.deque()
    total = []
    for _ in range(steps):
        buf = produce(producer, 1024)
        consumer.wait_stream(producer)
        total.append(buf.sum())
        in_flight.append((buf, consumer.record_event()))
        del buf
        if len(in_flight) > 2:
            oldest, oldest_done = in_flight.popleft()
            producer.wait_event(oldest_done)
            del oldest
    while in_flight:
        oldest, oldest_done = in_flight.popleft()
        producer.wait_event(oldest_done)
        del oldest
    return total


def depth_two_no_wait(producer, steps):
    consumer = torch.cuda.current_stream()
    in_flight = collections.deque()
    total = []
    for _ in range(steps):
        buf = produce(producer, 1024)
        consumer.wait_stream(producer)
        total.append(buf.sum())
        in_flight.append((buf, consumer.record_event()))
        del buf
        if len(in_flight) > 2:
            oldest, oldest_done = in_flight.popleft()
            del oldest  # CHECK: [[@LINE]]:13: warning: 'oldest' is freed on stream 'producer' while the current stream may still be using it{{.*}}[xstream-unordered-free]
    torch.cuda.synchronize()
    in_flight.clear()
    return total


def depth_n(producer, steps, depth):
    consumer = torch.cuda.current_stream()
    pending = []
    total = []
    for _ in range(steps):
        buf = produce(producer, 1024)
        consumer.wait_stream(producer)
        total.append(buf.sum())
        pending.append((buf, consumer.record_event()))
        del buf
        while len(pending) > depth:
            oldest, oldest_done = pending.pop(0)
            producer.wait_event(oldest_done)
            del oldest
    for oldest, oldest_done in pending:
        producer.wait_event(oldest_done)
    pending.clear()
    return total


class GatherState(NamedTuple):
    result: torch.Tensor
    event: Optional[torch.cuda.Event]


class Unsharder:
    def __init__(self):
        self.gather_stream = torch.cuda.Stream()
        self.state = None

    def gather(self, n):
        with torch.cuda.stream(self.gather_stream):
            return torch.empty(n, device="cuda")

    def step_clean(self, n):
        result = self.gather(n)
        torch.cuda.current_stream().wait_stream(self.gather_stream)
        out = result * 2
        state = GatherState(result, torch.cuda.current_stream().record_event())
        del result
        self.gather_stream.wait_event(state.event)
        del state
        return out

    def step_buggy(self, n):
        result = self.gather(n)
        torch.cuda.current_stream().wait_stream(self.gather_stream)
        out = result * 2
        state = GatherState(result, torch.cuda.current_stream().record_event())
        del result
        state = None  # CHECK: [[@LINE]]:9: warning: 'state' is freed by this assignment on stream 'self.gather_stream' while the current stream may still be using it{{.*}}[xstream-unordered-free]
        return out


def ring_of_events(producer, steps, depth):
    # N buffers in flight, one event per slot: the producer waits on the
    # slot's event before the slot's previous buffer goes.
    consumer = torch.cuda.current_stream()
    slots = [None] * depth
    done = [torch.cuda.Event() for _ in range(depth)]
    total = []
    for step in range(steps):
        i = step % depth
        buf = produce(producer, 1024)
        consumer.wait_stream(producer)
        total.append(buf.sum())
        producer.wait_event(done[i])
        slots[i] = buf
        done[i].record()
        del buf
    for i in range(depth):
        producer.wait_event(done[i])
    slots.clear()
    return total


def ring_dropped_without_waiting(producer, steps, depth):
    consumer = torch.cuda.current_stream()
    slots = [None] * depth
    done = [torch.cuda.Event() for _ in range(depth)]
    for step in range(steps):
        i = step % depth
        buf = produce(producer, 1024)
        consumer.wait_stream(producer)
        buf.sum()
        producer.wait_event(done[i])
        slots[i] = buf
        done[i].record()
        del buf
    slots.clear()  # CHECK: [[@LINE]]:5: warning: 'slots' is freed on stream 'producer' while the current stream may still be using it{{.*}}[xstream-unordered-free]
