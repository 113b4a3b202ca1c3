"""trl's activation offloading: saved activations kept in pinned host memory.

    python3 trl_activation_offload.py [--steps N] [--layers L] [--width W] [--tokens T]
                                      [--no-streams]

A stack of Linear-GELU-Linear-LayerNorm blocks trained with AdamW, each
forward and backward inside trl's OffloadActivations
(trl.models.activation_offloading), the saved-tensor hooks that move every
saved activation of 1 KiB or more to pinned host memory in the forward and
bring it back in the backward. With streams (the default) the offload
runs on a stream of the hooks' own (s1) that first waits for the compute
stream; the device activation is kept until the compute stream has waited
for the copy's event (the last five stay stashed and are handed back as
they are). A reload runs on s1 too, the compute stream waits for s1
before the backward node reads it, and the reloaded tensor is dropped one
node later, after s1 has waited for an event recorded on the compute stream
(or with record_stream where a view of it lives on). Leaving the context
synchronizes both streams.

The first step's gradients must equal those of the same step without the
hooks, and the loss must fall. Exits 1 when either fails, 2 without a CUDA
device, 3 without trl.
"""
import argparse
import sys

import torch
from torch import nn


def make_model(layers: int, width: int) -> nn.Module:
    blocks = []
    for _ in range(layers):
        blocks += [nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width),
                   nn.LayerNorm(width)]
    return nn.Sequential(*blocks, nn.Linear(width, 16))


def gradients(model: nn.Module) -> list:
    return [p.grad.detach().clone() for p in model.parameters()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--no-streams", action="store_true")
    args = parser.parse_args(argv)
    if args.steps < 2 or args.layers < 1 or args.width < 16 or args.tokens < 1:
        parser.error("need --steps >= 2, --layers >= 1, --width >= 16, --tokens >= 1")
    if not torch.cuda.is_available():
        print("trl_activation_offload.py: no CUDA device available", file=sys.stderr)
        return 2
    try:
        import trl
        from trl.models.activation_offloading import OffloadActivations
    except ImportError as error:
        print(f"trl_activation_offload.py: trl is not importable ({error})", file=sys.stderr)
        return 3

    torch.manual_seed(0)
    model = make_model(args.layers, args.width).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    inputs = torch.randn(args.tokens, args.width, device="cuda")
    targets = torch.randn(args.tokens, 16, device="cuda")

    # The first step without the hooks, for its gradients.
    nn.functional.mse_loss(model(inputs), targets).backward()
    reference = gradients(model)
    optimizer.zero_grad(set_to_none=True)

    offloading = OffloadActivations(use_streams=not args.no_streams)
    losses = []
    differing = 0
    for step in range(args.steps):
        with offloading:
            loss = nn.functional.mse_loss(model(inputs), targets)
            loss.backward()
        if step == 0:
            differing = sum(not torch.allclose(got, want, rtol=1e-4, atol=1e-6)
                            for got, want in zip(gradients(model), reference))
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    torch.cuda.synchronize()
    falls = losses[-1] < losses[0]
    print(f"trl_activation_offload: trl {trl.__version__}, "
          f"{'one stream' if args.no_streams else 'two streams'}, {args.steps} steps: "
          f"loss {losses[0]:.4f} -> {losses[-1]:.4f}, {differing} gradients differ from "
          f"the step without offloading", flush=True)
    return 0 if falls and differing == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
