"""Host-side races on pinned memory, and their correct twins.

  refill         a pinned staging tensor refilled on the host
                 (staging.copy_(batch)) while the previous
                 gpu.copy_(staging, non_blocking=True) on a busy copy stream
                 is still queued: the upload sends the new batch (write
                 after read at the refill)
  refill-sync    the twin: the host waits for the copy stream first
  download       cpu = gpu.to("cpu", non_blocking=True) read on the host
                 (float(cpu.sum())) with no synchronization: the host reads
                 bytes the copy has not written yet (use before ready at the
                 read)
  download-sync  the twin: the copy stream's event is synchronized first
  loader         DataLoader(pin_memory=True) batches uploaded with
                 non_blocking=True: the pinned allocator's event-based
                 reuse orders every refill; silent
  download-HOW   the download read on the host through something that is
                 not an aten operator, with no synchronization; HOW is
                 numpy (cpu.numpy()), array (np.asarray(cpu)), dlpack
                 (np.from_dlpack(cpu)) or tolist (cpu.tolist()): a use
                 before ready where the host gets the view (or the list)
  download-item  a sum downloaded into a pinned scalar read with .item()
                 (aten::item) before it lands
  from-numpy     a download into numpy memory registered with
                 cudaHostRegister, viewed again with torch.from_numpy
                 before it lands
  download-HOW-sync, download-item-sync, from-numpy-sync
                 the twins: the copy stream's event is synchronized first
  views-sync     every twin above in one run
The numpy, array, dlpack and from-numpy modes need NumPy.

Each race prints [FAIL] when a round corrupted natively, [PASS] otherwise.
"""
import sys

import torch

try:
    import numpy as np
except ImportError:  # only the numpy, array, dlpack and from-numpy modes need it
    np = None

ROUNDS = 4
N = 1 << 22  # floats per batch (16 MiB)
BUSY = 200_000_000  # cycles the copy stream spends before the copy


def refill_round(copy_stream, sync):
    staging = torch.empty(N, pin_memory=True)
    gpu = torch.empty(N, device="cuda")
    staging.fill_(1.0)
    torch.cuda.synchronize()
    with torch.cuda.stream(copy_stream):
        torch.cuda._sleep(BUSY)
        gpu.copy_(staging, non_blocking=True)  # xsc: upload
    if sync:
        copy_stream.synchronize()
    staging.copy_(torch.full((N,), 2.0))  # xsc: refill
    torch.cuda.synchronize()
    return bool((gpu.cpu() != 1.0).any())


def download_round(copy_stream, sync):
    gpu = torch.full((N,), 3.0, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(copy_stream):
        torch.cuda._sleep(BUSY)
        cpu = gpu.to("cpu", non_blocking=True)  # xsc: download
        done = torch.cuda.Event()
        done.record()
    if sync:
        done.synchronize()
    total = float(cpu.sum())  # xsc: host read
    torch.cuda.synchronize()
    return total != 3.0 * N


def view_download(copy_stream, sync):
    """A download of 3.0s on the busy copy stream into a pinned tensor, the
    copy stream's event synchronized first when `sync`; returns the tensor."""
    gpu = torch.full((N,), 3.0, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(copy_stream):
        torch.cuda._sleep(BUSY)
        cpu = gpu.to("cpu", non_blocking=True)  # xsc: view download
        done = torch.cuda.Event()
        done.record()
    if sync:
        done.synchronize()
    return cpu


def download_view_round(copy_stream, sync, how):
    cpu = view_download(copy_stream, sync)
    if how == "numpy":
        total = float(cpu.numpy().sum(dtype="float64"))  # xsc: numpy view
    elif how == "array":
        total = float(np.asarray(cpu).sum(dtype="float64"))  # xsc: array view
    elif how == "dlpack":
        total = float(np.from_dlpack(cpu).sum(dtype="float64"))  # xsc: dlpack view
    else:
        total = float(sum(cpu.tolist()))  # xsc: tolist view
    torch.cuda.synchronize()
    return total != 3.0 * N


def item_round(copy_stream, sync):
    gpu = torch.full((N,), 3.0, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(copy_stream):
        torch.cuda._sleep(BUSY)
        cpu = gpu.sum().to("cpu", non_blocking=True)  # xsc: item download
        done = torch.cuda.Event()
        done.record()
    if sync:
        done.synchronize()
    total = cpu.item()  # xsc: item read
    torch.cuda.synchronize()
    return total != 3.0 * N


def from_numpy_round(copy_stream, sync):
    host = np.zeros(N, dtype=np.float32)
    cudart = torch.cuda.cudart()
    cudart.cudaHostRegister(host.ctypes.data, host.nbytes, 0)
    try:
        gpu = torch.full((N,), 3.0, device="cuda")
        target = torch.from_numpy(host)
        torch.cuda.synchronize()
        with torch.cuda.stream(copy_stream):
            torch.cuda._sleep(BUSY)
            target.copy_(gpu, non_blocking=True)  # xsc: registered download
            done = torch.cuda.Event()
            done.record()
        if sync:
            done.synchronize()
        view = torch.from_numpy(host)  # xsc: from_numpy view
        total = float(host.sum(dtype=np.float64))
        torch.cuda.synchronize()
        del view, target
    finally:
        cudart.cudaHostUnregister(host.ctypes.data)
    return total != 3.0 * N


VIEW_RACES = {
    "download-numpy": lambda s, sync: download_view_round(s, sync, "numpy"),
    "download-array": lambda s, sync: download_view_round(s, sync, "array"),
    "download-dlpack": lambda s, sync: download_view_round(s, sync, "dlpack"),
    "download-tolist": lambda s, sync: download_view_round(s, sync, "tolist"),
    "download-item": item_round,
    "from-numpy": from_numpy_round,
}


def loader():
    data = torch.utils.data.TensorDataset(torch.arange(64 * 1024, dtype=torch.float32).view(64, 1024))
    batches = torch.utils.data.DataLoader(data, batch_size=8, pin_memory=True, num_workers=2)
    total = 0.0
    for (batch,) in batches:
        on_gpu = batch.cuda(non_blocking=True)
        total += float((on_gpu * 2).sum())
    expected = 2.0 * float(torch.arange(64 * 1024, dtype=torch.float64).sum())
    print("loader: [%s]" % ("PASS" if total == expected else "FAIL"))


def main(mode):
    copy_stream = torch.cuda.Stream()
    print("%s: copy stream 0x%x" % (mode, copy_stream.cuda_stream))
    if mode == "loader":
        loader()
        return
    if mode == "views-sync":
        for name, race in VIEW_RACES.items():
            corrupted = sum(race(copy_stream, True) for _ in range(ROUNDS))
            print("%s-sync: [%s] %d/%d rounds corrupted" % (name, "FAIL" if corrupted else "PASS", corrupted, ROUNDS))
        return
    races = {"refill": refill_round, "download": download_round}
    races.update(VIEW_RACES)
    race = races[mode[:-len("-sync")] if mode.endswith("-sync") else mode]
    corrupted = sum(race(copy_stream, mode.endswith("-sync")) for _ in range(ROUNDS))
    print("%s: [%s] %d/%d rounds corrupted" % (mode, "FAIL" if corrupted else "PASS", corrupted, ROUNDS))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "refill")
