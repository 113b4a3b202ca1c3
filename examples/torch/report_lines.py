"""Findings whose report must name the line the user changes.

    python3 report_lines.py backward|backward-wait|cublas-read|cublas-wait|hook-free|hook-keep

  backward       the loss's target is refreshed on a side stream (through
                 .data) after the forward pass; the backward pass, run on the
                 autograd engine's thread, reads it on the default stream
                 without waiting: a use before ready in NllLossBackward0,
                 whose forward call is the F.nll_loss line
  backward-wait  the default stream waits for the side stream first
  cublas-read    a module's weight is refreshed on a side stream; the
                 module's Linear (cuBLASLt) reads it on the default stream
                 without waiting: a use before ready at the model's line
  cublas-wait    the default stream waits first
  hook-free      a forward hook drops the last reference to a buffer a side
                 stream still reads: an unordered free at the hook's line
  hook-keep      the hook makes the default stream wait for the side stream
                 before dropping it

The script prints a line per mode and exits 0: the checker decides. Lines
tagged "# xsc:" are referred to by the test suite.
"""
import argparse
import sys

import torch
import torch.nn.functional as F


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(512, 256)

    def forward(self, x):
        return self.fc(x)  # xsc: model line


def backward(wait):
    side = torch.cuda.Stream()
    logits = torch.randn(256, 10, device="cuda", requires_grad=True)
    target = torch.randint(0, 10, (256,), device="cuda")
    next_target = torch.randint(0, 10, (256,), device="cuda")
    loss = F.nll_loss(F.log_softmax(logits, dim=1), target)  # xsc: forward nll_loss
    side.wait_stream(torch.cuda.current_stream())  # the forward pass read target first
    with torch.cuda.stream(side):
        target.data.copy_(next_target)  # xsc: refresh target
    if wait:
        torch.cuda.current_stream().wait_stream(side)
    loss.backward()  # xsc: backward
    torch.cuda.synchronize()
    print(f"backward: grad sum {float(logits.grad.abs().sum()):.3f}")


def cublas_read(wait):
    side = torch.cuda.Stream()
    net = Net().cuda()
    x = torch.randn(1024, 512, device="cuda")
    fresh = torch.randn(256, 512, device="cuda")
    side.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(side):
        net.fc.weight.copy_(fresh)  # xsc: refresh weight
    if wait:
        torch.cuda.current_stream().wait_stream(side)
    with torch.no_grad():
        y = net(x)  # xsc: call model
    torch.cuda.synchronize()
    print(f"cublas-read: {float(y.abs().sum()) > 0}")


def hook_free(keep):
    side = torch.cuda.Stream()
    net = Net().cuda()
    state = {"staged": torch.randn(1 << 20, device="cuda")}
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        partial = state["staged"].sum()  # the side stream reads the buffer

    def drop_staged(module, inputs, output):
        if keep:
            torch.cuda.current_stream().wait_stream(side)
        del state["staged"]  # xsc: hook free

    net.register_forward_hook(drop_staged)
    x = torch.randn(64, 512, device="cuda")
    with torch.no_grad():
        net(x)
        reuse = torch.zeros(1 << 20, device="cuda")  # the block is handed out again
    torch.cuda.synchronize()
    print(f"hook-free: {float(partial) != 0.0} {float(reuse.sum())}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["backward", "backward-wait", "cublas-read",
                                         "cublas-wait", "hook-free", "hook-keep"])
    args = parser.parse_args(argv)
    sys.stdout.flush()
    if args.mode.startswith("backward"):
        backward(args.mode == "backward-wait")
    elif args.mode.startswith("cublas"):
        cublas_read(args.mode == "cublas-wait")
    else:
        hook_free(args.mode == "hook-keep")
    return 0


if __name__ == "__main__":
    sys.exit(main())
