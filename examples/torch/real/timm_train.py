"""timm: train an image model with the input pipeline most vision code uses.

    python3 timm_train.py [--steps N]

A timm ResNet-18 (built by name, no weights downloaded) in channels_last,
trained with bfloat16 autocast, SGD with momentum and timm's model EMA.
Batches come from a torch DataLoader with two worker processes and
pin_memory=True (the pinning thread), copied to the GPU with
non_blocking=True, as timm's own training script does. Exits 1 when the loss
did not fall or the EMA weights are not finite.
"""
import argparse
import math
import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"

import torch  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

CLASSES = 10
IMAGE = 64


def dataset(samples: int) -> TensorDataset:
    """Images whose class decides a bright square's position: learnable."""
    generator = torch.Generator().manual_seed(0)
    labels = torch.randint(0, CLASSES, (samples,), generator=generator)
    images = torch.randn(samples, 3, IMAGE, IMAGE, generator=generator) * 0.1
    for i, label in enumerate(labels.tolist()):
        row, col = divmod(label, 4)
        images[i, :, row * 16:row * 16 + 12, col * 16:col * 16 + 12] += 1.0
    return TensorDataset(images, labels)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=24)
    args = parser.parse_args(argv)
    if args.steps < 4:
        parser.error("need --steps >= 4")
    if not torch.cuda.is_available():
        print("timm_train.py: no CUDA device available", file=sys.stderr)
        return 2
    import timm
    from timm.utils import ModelEmaV3

    torch.manual_seed(0)
    model = timm.create_model("resnet18", pretrained=False, num_classes=CLASSES)
    model = model.cuda().to(memory_format=torch.channels_last)
    ema = ModelEmaV3(model, decay=0.9)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loader = DataLoader(dataset(32 * 8), batch_size=32, shuffle=True, num_workers=2,
                        pin_memory=True, drop_last=True, persistent_workers=True)

    losses = []
    step = 0
    while step < args.steps:
        for images, labels in loader:
            images = images.cuda(non_blocking=True).to(memory_format=torch.channels_last)
            labels = labels.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            ema.update(model, step=step)
            losses.append(loss.detach())
            step += 1
            if step == args.steps:
                break
    values = torch.stack(losses).float().tolist()
    first = sum(values[:2]) / 2
    last = sum(values[-2:]) / 2
    ema_ok = all(bool(torch.isfinite(p).all()) for p in ema.module.parameters())
    print(f"timm_train: trained {args.steps} steps, loss {first:.4f} -> {last:.4f}; "
          f"ema {'finite' if ema_ok else 'NOT finite'}")
    if not (math.isfinite(last) and last < first and ema_ok):
        print("timm_train: FAIL (the loss did not fall, or the EMA is not finite)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
