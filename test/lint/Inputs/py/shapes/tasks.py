# Worker tasks that run their work under a stream context helper, as a
# pipeline's: `use_stream(stream)` makes the stream current only when one
# is given. An instance made with None (`Task(None, work)`, directly or by
# a helper that returns it) runs its work on the current stream, so what
# it returns needs no wait before the current stream uses it; one made
# with a side stream does. A name made with None on one path and with a
# stream on another is checked as the stream's, and so is one whose class
# replaces the None it is given by a stream of its own. Each bug is
# followed by its fixed twin, which must stay silent.
from contextlib import contextmanager

import torch


@contextmanager
def use_stream(stream):
    if not stream:
        yield
        return
    with torch.cuda.stream(stream):
        yield


class Task:
    def __init__(self, stream, compute):
        self.stream = stream
        self._compute = compute

    def compute(self):
        with use_stream(self.stream):
            return self._compute()


def make_task(batch):
    def work():
        return batch * 2
    return Task(None, work)


def run_without_stream(batch):
    task = Task(None, lambda: batch * 2)
    result = task.compute()
    return result + 1


def run_made_without_stream(batch):
    task = make_task(batch)
    result = task.compute()
    return result + 1


def run_on_side_stream(batch):
    task = Task(torch.cuda.Stream(), lambda: batch * 2)
    result = task.compute()
    return result + 1  # CHECK: [[@LINE]]:12: warning: 'result' is used on the current stream before its write on stream 'task.stream' is ordered before this use{{.*}}[xstream-use-before-ready]


def run_on_side_stream_waited(batch):
    task = Task(torch.cuda.Stream(), lambda: batch * 2)
    result = task.compute()
    torch.cuda.current_stream().wait_stream(task.stream)
    return result + 1


def run_either(batch, overlap):
    if overlap:
        task = Task(torch.cuda.Stream(), lambda: batch * 2)
    else:
        task = Task(None, lambda: batch * 2)
    result = task.compute()
    return result + 1  # CHECK: [[@LINE]]:12: warning: 'result' is used on the current stream before its write on stream 'task.stream' is ordered before this use{{.*}}[xstream-use-before-ready]


def run_either_waited(batch, overlap):
    if overlap:
        task = Task(torch.cuda.Stream(), lambda: batch * 2)
    else:
        task = Task(None, lambda: batch * 2)
    result = task.compute()
    if task.stream is not None:
        torch.cuda.current_stream().wait_stream(task.stream)
    return result + 1



class Job:
    # torch.cuda.stream(None) leaves the current stream current, as a helper
    # given None does.
    def __init__(self, stream):
        self.stream = stream

    def run(self, n):
        with torch.cuda.stream(self.stream):
            return torch.ones(n, device="cuda") * 2


def run_job_without_stream(n):
    job = Job(None)
    result = job.run(n)
    return result + 1


def run_job_on_side_stream(n):
    job = Job(torch.cuda.Stream())
    result = job.run(n)
    # CHECK: [[@LINE+1]]:5: warning: 'result' is freed when 'run_job_on_side_stream' returns on stream 'job.stream' while the current stream may still be using it{{.*}}[xstream-unordered-free]
    return result + 1  # CHECK: [[@LINE]]:12: warning: 'result' is used on the current stream before its write on stream 'job.stream' is ordered before this use{{.*}}[xstream-use-before-ready]


def run_job_on_side_stream_waited(n):
    job = Job(torch.cuda.Stream())
    result = job.run(n)
    torch.cuda.current_stream().wait_stream(job.stream)
    out = result + 1
    result.record_stream(torch.cuda.current_stream())
    return out


class Lane:
    # Given None, it makes a side stream of its own: its attribute is that
    # stream, not the None it was made with.
    def __init__(self, stream):
        if stream is None:
            stream = torch.cuda.Stream()
        self.stream = stream

    def run(self, n):
        with torch.cuda.stream(self.stream):
            return torch.ones(n, device="cuda") * 2


def run_lane_own_stream(n):
    lane = Lane(None)
    result = lane.run(n)
    # CHECK: [[@LINE+1]]:5: warning: 'result' is freed when 'run_lane_own_stream' returns on stream 'lane.stream' while the current stream may still be using it{{.*}}[xstream-unordered-free]
    return result + 1  # CHECK: [[@LINE]]:12: warning: 'result' is used on the current stream before its write on stream 'lane.stream' is ordered before this use{{.*}}[xstream-use-before-ready]


def run_lane_own_stream_waited(n):
    lane = Lane(None)
    result = lane.run(n)
    torch.cuda.current_stream().wait_stream(lane.stream)
    out = result + 1
    result.record_stream(torch.cuda.current_stream())
    return out
