"""A CPU training run whose numbers must not change under the writer kernels.

Usage: writer_kernels_train.py [ADAPTER.so STORE_FILE]

Trains a small MLP for a few steps with the optimizers and wrappers whose
in-place and foreach operators the PyTorch adapter's writer kernels take
(AdamW and Adam foreach, SGD with momentum, gradient clipping, DDP over a
one-rank gloo group: its buckets' copy_ and div_), then prints a checksum
of every parameter's bytes and how many writer calls the adapter took. With
an adapter given, it is attached to a stand-in host API and installed
(XSC_TORCH_OP_DEVICE=cpu follows CPU tensors as a GPU's); without, the run
is native. The checksums of both runs must be equal.
"""
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

adapter = sys.argv[1] if len(sys.argv) > 1 else None
store = sys.argv[2] if len(sys.argv) > 2 else None
rt = None
if adapter:
    from fake_host_api import FakeRuntime
    rt = FakeRuntime(adapter, record=False)
    if rt.install_operators() != 0:
        sys.exit("writer_kernels_train: the operator hook could not be installed")

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
torch.set_num_threads(1)


def model():
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 32),
                               torch.nn.LayerNorm(32))


def train(net, optimizer, steps=6, clip=True, wrap=None):
    inputs = torch.randn(16, 32)
    target = torch.randn(16, 32)
    module = wrap(net) if wrap else net
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=False)  # zero_ on every gradient
        loss = torch.nn.functional.mse_loss(module(inputs), target)
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5, foreach=True)
        optimizer.step()
    return net


digest = hashlib.sha256()
runs = [
    ("adamw", lambda p: torch.optim.AdamW(p, lr=1e-2, foreach=True), None),
    ("adam-amsgrad", lambda p: torch.optim.Adam(p, lr=1e-2, amsgrad=True, foreach=True), None),
    ("sgd-momentum", lambda p: torch.optim.SGD(p, lr=1e-2, momentum=0.9, foreach=True), None),
]
if store:
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
    runs.append(("ddp", lambda p: torch.optim.AdamW(p, lr=1e-2, foreach=True),
                 lambda net: torch.nn.parallel.DistributedDataParallel(net)))
for name, make, wrap in runs:
    net = model()
    train(net, make(net.parameters()), wrap=wrap)
    for p in net.parameters():
        digest.update(p.detach().numpy().tobytes())
    print(f"{name}: trained")
if store:
    dist.destroy_process_group()
print("checksum", digest.hexdigest())
if rt is not None:
    stats = rt.counters()
    calls, unboxed = int(stats["writer_calls"]), int(stats["unboxed_calls"])
    print("writer calls taken:", "many" if calls >= 100 else calls,
          "of which unboxed:", "most" if unboxed * 2 > calls else unboxed)
