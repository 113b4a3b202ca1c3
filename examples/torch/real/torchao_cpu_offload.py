"""torchao's CPUOffloadOptimizer: the optimizer's step on the host.

    python3 torchao_cpu_offload.py [--offload-gradients] [--steps N]

A four-layer MLP trained with torchao.optim.CPUOffloadOptimizer around
AdamW. The optimizer keeps each large parameter's master copy and its
gradient in pinned host memory. In the backward pass, a hook per parameter
copies the gradient out as soon as it is accumulated, on a stream of the
optimizer's own that first waits for the current stream, and records an
event there. Its step() waits on each event, runs AdamW on the host and
copies the parameter back on the same stream; at the end it synchronizes
that stream. So every step has device gradients written on the default
stream and read on the optimizer's stream, pinned host buffers written by
copies and then read and written by the host, and device parameters
written on the optimizer's stream and read by the next forward on the
default stream: the transfers this program exists to run. With
--offload-gradients the hook also drops each device gradient after its
copy, with record_stream.

The loss must fall, and after the last step every device parameter must
equal its host master copy. Exits 1 when either fails, 2 without a CUDA
device.
"""
import argparse
import sys

import torch
from torch import nn


def make_model(width: int) -> nn.Module:
    return nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, width), nn.GELU(),
                         nn.Linear(width, width), nn.GELU(), nn.Linear(width, 16))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offload-gradients", action="store_true")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--width", type=int, default=1024)
    args = parser.parse_args(argv)
    if args.steps < 2 or args.width < 64:
        parser.error("need --steps >= 2 and --width >= 64")
    if not torch.cuda.is_available():
        print("torchao_cpu_offload.py: no CUDA device available", file=sys.stderr)
        return 2
    import torchao
    from torchao.optim import CPUOffloadOptimizer

    torch.manual_seed(0)
    model = make_model(args.width).cuda()
    optimizer = CPUOffloadOptimizer(model.parameters(), torch.optim.AdamW, lr=1e-3,
                                    offload_gradients=args.offload_gradients)
    inputs = torch.randn(256, args.width, device="cuda")
    targets = torch.randn(256, 16, device="cuda")
    losses = []
    for _ in range(args.steps):
        loss = nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    torch.cuda.synchronize()
    differing = sum(not torch.equal(device.detach().cpu(), host)
                    for device, host in optimizer.param_d2h_map.items())
    falls = losses[-1] < losses[0]
    print(f"torchao_cpu_offload: torchao {torchao.__version__}, "
          f"{'offloaded' if args.offload_gradients else 'kept'} gradients, {args.steps} steps: "
          f"loss {losses[0]:.4f} -> {losses[-1]:.4f}, {len(optimizer.param_d2h_map)} offloaded "
          f"parameters, {differing} differ from their host copies", flush=True)
    return 0 if falls and differing == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
