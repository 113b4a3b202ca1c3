# Copies to the host that do not block, in code that names no stream, event
# or pinned buffer: `t.to("cpu", non_blocking=True)` of a device tensor gives
# pinned host memory that the copy fills after the call returns, so the host
# must not read it before something waits for the current stream. A blocking
# copy to the host synchronizes the current stream before it returns, which
# finishes an earlier copy too (expert-parallel split sizes). Each bug is
# followed by its fixed twins, which must stay silent.
import torch


def split_sizes_unsynced(counts, received):
    input_splits = counts.sum(dim=1).to(torch.device("cpu"), non_blocking=True)
    output_splits = received.sum(dim=1).to(torch.device("cpu"), non_blocking=True)
    return input_splits.tolist(), output_splits.tolist()  # CHECK: [[@LINE]]:12: warning: 'input_splits' is read by the host before its write on the current stream is finished{{.*}}[xstream-use-before-ready]
    # CHECK: [[@LINE-1]]:35: warning: 'output_splits' is read by the host before its write on the current stream is finished{{.*}}[xstream-use-before-ready]


def split_sizes_after_blocking_copy(counts, received):
    input_splits = counts.sum(dim=1).to(torch.device("cpu"), non_blocking=True)
    output_splits = received.sum(dim=1).to(torch.device("cpu"), non_blocking=False)
    return input_splits.tolist(), output_splits.tolist()


def split_sizes_after_device_sync(counts):
    input_splits = counts.sum(dim=1).to("cpu", non_blocking=True)
    torch.cuda.synchronize()
    return input_splits.tolist()


def loss_value_unsynced(loss):
    host = loss.detach().to("cpu", non_blocking=True)
    return host.item()  # CHECK: [[@LINE]]:12: warning: 'host' is read by the host before its write on the current stream is finished{{.*}}[xstream-use-before-ready]


def loss_value_blocking(loss):
    host = loss.detach().to("cpu")
    return host.item()
