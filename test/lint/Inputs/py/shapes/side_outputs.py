# What an unknown call returns while a side stream is current (a model run
# under `torch.cuda.stream(s)`): it may be one of its arguments or a view of
# one, but whichever it is, the call's work wrote it on that stream, so the
# current stream must wait before it reads it. Each bug is followed by its
# fixed twins, which must stay silent.
import torch


def forward_on_side_unwaited(model, x: torch.Tensor):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = model(x)
    return torch.relu(y)  # CHECK: [[@LINE]]:12: warning: 'y' is used on the current stream before its write on stream 'side' is ordered before this use{{.*}}[xstream-use-before-ready]


def forward_on_side_waited(model, x: torch.Tensor):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = model(x)
    torch.cuda.current_stream().wait_stream(side)
    return torch.relu(y)


def forward_on_side_evented(model, x: torch.Tensor):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = model(x)
        done = torch.cuda.Event()
        done.record()
    torch.cuda.current_stream().wait_event(done)
    return torch.relu(y)
