# Does not parse: the call is never closed.
import torch


def pipeline(stream):
    with torch.cuda.stream(stream):
        buf = torch.empty((4, 4), device="cuda"
    del buf
