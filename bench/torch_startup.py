"""The smallest PyTorch CUDA program: import, CUDA initialization, one
allocation, one kernel, one synchronization. bench/run_all.py times it to
show the fixed cost each checker adds to every PyTorch program."""
import torch

x = torch.ones(1024, device="cuda")
print(f"sum={(x * 2).sum().item():.0f}")
