"""A one-rank NCCL process group on GPU 0, for the data-parallel programs here.

The rendezvous is TCP on the loopback interface. The port is one the kernel
has just handed out (bound, read, released), so several of these programs
can run side by side without agreeing on ports.
"""
import os
import socket
import sys

import torch
import torch.distributed as dist


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def require_cuda(program: str) -> None:
    if not torch.cuda.is_available():
        print(f"{program}: no CUDA device available", file=sys.stderr)
        sys.exit(2)


def init_single_rank(program: str) -> torch.device:
    """Initializes the default group (backend nccl, rank 0 of 1) on cuda:0."""
    require_cuda(program)
    if not dist.is_nccl_available():
        print(f"{program}: this torch has no NCCL backend", file=sys.stderr)
        sys.exit(2)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(free_loopback_port())
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", rank=0, world_size=1)
    return device


def finish() -> None:
    dist.destroy_process_group()
