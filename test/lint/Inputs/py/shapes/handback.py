# Tensors a function hands back written on a stream the current stream does
# not wait for: a result it returns, or one it keeps on the object. The
# caller's next kernel, on the current stream, may read it before the
# write. Each bug is followed by its fixed twin, which must stay silent.
import torch


class OverlappedBranch:
    """A branch computed on a side stream to overlap another one; its
    result is collected by a getter."""

    def __init__(self):
        self.branch_stream = torch.cuda.Stream()
        self.partial = None
        self.scale = None

    def stage(self, x):
        self.partial = torch.relu(x)
        self.scale = x.sum()

    # The product is made on the branch stream and returned as it is.
    def collect_unwaited(self):
        with torch.cuda.stream(self.branch_stream):
            result = self.partial * self.scale  # CHECK: [[@LINE]]:22: warning: 'result' is written on stream 'self.branch_stream' here and handed back when 'collect_unwaited' returns, with nothing making the current stream wait for this write{{.*}}[xstream-pending-at-return]
        self.partial = None
        return result


class OverlappedBranchJoined:
    def __init__(self):
        self.branch_stream = torch.cuda.Stream()
        self.partial = None
        self.scale = None

    def stage(self, x):
        self.partial = torch.relu(x)
        self.scale = x.sum()

    def collect(self):
        with torch.cuda.stream(self.branch_stream):
            result = self.partial * self.scale
        self.partial = None
        torch.cuda.current_stream().wait_stream(self.branch_stream)
        return result


class SummaryKeeper:
    """A summary made on a side stream and kept on the object."""

    def __init__(self):
        self.stats_stream = torch.cuda.Stream()
        self.total = None
        self.summary = None

    def summarize_unwaited(self):
        self.stats_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.stats_stream):
            self.summary = torch.sqrt(self.total)  # CHECK: [[@LINE]]:28: warning: 'self.summary' is written on stream 'self.stats_stream' here and handed back when 'summarize_unwaited' returns{{.*}}[xstream-pending-at-return]


class SummaryKeeperWithEvent:
    """The same, with an event recorded after the write and kept for the
    reader to wait on."""

    def __init__(self):
        self.stats_stream = torch.cuda.Stream()
        self.total = None
        self.summary = None
        self.summary_ready = None

    def summarize(self):
        self.stats_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.stats_stream):
            self.summary = torch.sqrt(self.total)
            self.summary_ready = torch.cuda.Event()
            self.summary_ready.record()


class GivenStreamSummary:
    """The stream comes from whoever made the object, whose own protocol
    orders it: not judged here."""

    def __init__(self, stream):
        self.stats_stream = stream
        self.total = None

    def summarize(self):
        self.stats_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.stats_stream):
            return torch.sqrt(self.total)
