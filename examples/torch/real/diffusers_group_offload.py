"""Hugging Face diffusers: group offloading with a transfer stream.

    python3 diffusers_group_offload.py [--mode MODE] [--blocks N] [--steps N]

A stack of blocks (Linear-GELU-Linear-LayerNorm, residual) between an input
and an output layer, run for inference with diffusers' apply_group_offloading
(offload_type "block_level", one block a group, or "leaf_level"), use_stream
on: every block's weights live in host memory and are copied in on a
transfer stream of diffusers' own while the block before runs on the
default stream, then dropped after the block's forward. So every block's
weights are device blocks allocated on the transfer stream, written there,
read by the default stream's GEMMs and freed: the transfers this program
exists to run. diffusers orders them with host synchronizations (the
transfer stream before each prefetch and before the last block; the default
stream before the drops) or, with record_stream=True, records the default
stream on each onloaded tensor instead of the second.

Modes (diffusers' own options):
  synchronize    block_level, record_stream=False (the default)
  record-stream  block_level, record_stream=True
  low-mem        block_level, low_cpu_mem_usage=True (weights pinned into
                 temporary buffers at each onload)
  leaf           leaf_level, record_stream=True

Each forward's output is compared with the same model kept on the device
(the first forward, which traces the order the blocks run in, included).
Exits 1 when one differs, 2 without a CUDA device.
"""
import argparse
import copy
import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"

import torch  # noqa: E402
from torch import nn  # noqa: E402

MODES = ("synchronize", "record-stream", "low-mem", "leaf")


class Block(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.up = nn.Linear(width, 2 * width)
        self.down = nn.Linear(2 * width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(x + self.down(torch.nn.functional.gelu(self.up(x))))


class Stack(nn.Module):
    def __init__(self, width: int, blocks: int):
        super().__init__()
        self.embed = nn.Linear(width, width)
        self.blocks = nn.ModuleList(Block(width) for _ in range(blocks))
        self.head = nn.Linear(width, width)

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def offload_options(mode: str) -> dict:
    options = {"offload_type": "block_level", "num_blocks_per_group": 1, "use_stream": True,
               "record_stream": False, "low_cpu_mem_usage": False}
    if mode == "record-stream":
        options["record_stream"] = True
    elif mode == "low-mem":
        options["low_cpu_mem_usage"] = True
    elif mode == "leaf":
        options.update(offload_type="leaf_level", num_blocks_per_group=None, record_stream=True)
    return options


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=MODES, default="synchronize")
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--width", type=int, default=1024)
    args = parser.parse_args(argv)
    if args.blocks < 2 or args.steps < 2 or args.width < 8:
        parser.error("need --blocks >= 2, --steps >= 2 and --width >= 8")
    if not torch.cuda.is_available():
        print("diffusers_group_offload.py: no CUDA device available", file=sys.stderr)
        return 2
    import diffusers
    from diffusers.hooks import apply_group_offloading

    torch.manual_seed(0)
    model = Stack(args.width, args.blocks).eval()
    reference = copy.deepcopy(model).cuda()
    apply_group_offloading(model, onload_device=torch.device("cuda"),
                           offload_device=torch.device("cpu"), **offload_options(args.mode))

    differing = 0
    with torch.no_grad():
        for step in range(args.steps):
            x = torch.randn(64, args.width, device="cuda")
            expected = reference(x)
            got = model(x)
            if not torch.allclose(got, expected, rtol=1e-4, atol=1e-4):
                differing += 1
    torch.cuda.synchronize()
    print(f"diffusers_group_offload: diffusers {diffusers.__version__}, mode {args.mode}, "
          f"{args.blocks} blocks, {args.steps} forwards: {differing} differ from the model "
          f"kept on the device", flush=True)
    return 0 if differing == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
