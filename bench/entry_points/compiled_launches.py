"""Launches of kernels torch.compile generated (Triton's launcher)."""
import torch


@torch.compile
def sine_and_cosine(x, y):
    return (x * y).sin() + y.cos()


x = torch.randn(4096, device="cuda")
y = torch.randn(4096, device="cuda")
for _ in range(20):
    z = sine_and_cosine(x, y)
torch.cuda.synchronize()
print("compiled launches:", float(z.sum()))
