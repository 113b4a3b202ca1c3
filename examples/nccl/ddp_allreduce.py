"""Overlapped gradient all-reduce on a side stream, DeepSpeed style.

    python ddp_allreduce.py bug|record_stream [--steps N] [--init URL]

Each step computes gradients on the default stream, flattens them into one
bucket there (so the bucket's allocation stream is the default stream), and
all-reduces the bucket on a side stream so the next step's compute overlaps
the communication. Then the bucket is dropped.

  bug            `del flat` with nothing ordering the default stream after the
                 side stream: the caching allocator may hand the block to the
                 next step's gradients while ncclAllReduce still runs on it.
  record_stream  flat.record_stream(side) before the drop: the allocator
                 defers the block's reuse until the side stream's work done so
                 far has completed. Clean.

torch.distributed runs a synchronous collective (async_op=False) on the
current stream, here the side stream, so the NCCL kernel is ordered on it.

Under torchrun the process group comes from the environment (RANK,
WORLD_SIZE, MASTER_ADDR, ...); run directly, it is a one-rank group
rendezvousing through a file store (--init to choose another URL).
"""

import argparse
import os
import sys
import tempfile

import torch
import torch.distributed as dist

BUCKET_ELEMS = 1 << 22  # 16 MiB of float32 per bucket
LAYERS = 4


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["bug", "record_stream"])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--init", default=None, help="init_method URL (default: a file:// store)")
    args = parser.parse_args()
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    return args


def init_group(init_url):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        dist.init_process_group("nccl")  # torchrun: env:// rendezvous
        return None
    store_dir = None
    if init_url is None:
        store_dir = tempfile.mkdtemp(prefix="xsc-ddp-")
        init_url = "file://" + os.path.join(store_dir, "store")
    dist.init_process_group("nccl", init_method=init_url, rank=0, world_size=1)
    return store_dir


def compute_grads(step):
    """Stand-in for backward: per-layer gradients written on the default stream."""
    per_layer = BUCKET_ELEMS // LAYERS
    return [torch.full((per_layer,), float(step + layer), device="cuda") for layer in range(LAYERS)]


def main():
    args = parse_args()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    store_dir = init_group(args.init)
    rank = dist.get_rank()
    default = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    print(f"rank {rank}/{dist.get_world_size()} pid {os.getpid()}: default stream "
          f"{default.cuda_stream:#x}, side stream {side.cuda_stream:#x}", flush=True)

    for step in range(args.steps):
        grads = compute_grads(step)
        flat = torch.cat(grads)  # the bucket: allocated on the default stream
        del grads
        side.wait_stream(default)  # the reduce starts after the bucket is filled
        with torch.cuda.stream(side):
            dist.all_reduce(flat)  # ncclAllReduce on the side stream: the bucket's last use
            if args.mode == "record_stream":
                flat.record_stream(side)  # defer reuse until the side stream's work is done
        del flat  # free-site: ddp (bug mode: the block is reusable on the default stream at once)

    torch.cuda.synchronize()
    print(f"rank {rank}: {args.mode}: {args.steps} steps reduced", flush=True)
    dist.destroy_process_group()
    if store_dir is not None:
        for name in os.listdir(store_dir):
            os.unlink(os.path.join(store_dir, name))
        os.rmdir(store_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
