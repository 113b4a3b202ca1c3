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

Each race prints [FAIL] when a round corrupted natively, [PASS] otherwise.
"""
import sys

import torch

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
    race = {"refill": refill_round, "download": download_round}[mode.replace("-sync", "")]
    corrupted = sum(race(copy_stream, mode.endswith("-sync")) for _ in range(ROUNDS))
    print("%s: [%s] %d/%d rounds corrupted" % (mode, "FAIL" if corrupted else "PASS", corrupted, ROUNDS))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "refill")
