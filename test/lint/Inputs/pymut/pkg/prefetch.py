# A weight fetched on a side stream and used on the current one: the wait
# orders the use after the copy, and record_stream keeps the block from
# the side stream's next allocation until the use is done. The last
# synchronize only bounds a timing.
import time

import torch


def fetch(side, host):
    with torch.cuda.stream(side):
        weight = host.to("cuda", non_blocking=True)
    return weight


def apply(x, host):
    side = torch.cuda.Stream()
    weight = fetch(side, host)
    torch.cuda.current_stream().wait_stream(side)
    y = x @ weight
    weight.record_stream(torch.cuda.current_stream())
    del weight
    return y


def timed(x, host):
    start = time.perf_counter()
    y = apply(x, host)
    torch.cuda.synchronize()
    return y, time.perf_counter() - start
