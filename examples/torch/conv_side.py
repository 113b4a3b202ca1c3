"""A convolution on a side stream whose output the default stream reads.

    python3 conv_side.py race|wait

The input and the layer are made on the default stream; the side stream
waits for them and computes y = conv2d(x) (torch.nn.Conv2d without a bias,
which PyTorch runs through cuDNN's graph API, cudnnBackendExecute: a
convolution writes all of y). The default stream then reads y (y.sum()).

  race  the read does not wait for the side stream: it may see y before the
        convolution lands
  wait  the default stream waits for the side stream first (correct)

The script prints what it read and exits 0 either way: the checker decides.
Lines tagged "# xsc:" are referred to by the test suite.
"""
import argparse
import sys

import torch


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["race", "wait"])
    args = parser.parse_args(argv)

    default = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    print(f"{args.mode}: default stream {default.cuda_stream:#x}, side stream {side.cuda_stream:#x}")
    sys.stdout.flush()
    # 8 x 16 x 32 x 32 in, 32 channels out, 3 x 3 with padding 1: y is
    # 8 x 32 x 32 x 32 floats (1048576 bytes).
    conv = torch.nn.Conv2d(16, 32, kernel_size=3, padding=1, bias=False, device="cuda")
    with torch.no_grad():
        conv.weight.fill_(1.0)
    x = torch.ones(8, 16, 32, 32, device="cuda")
    side.wait_stream(default)  # the input and the weights exist before the side stream reads them
    with torch.no_grad(), torch.cuda.stream(side):
        y = conv(x)  # xsc: conv
    if args.mode == "wait":
        default.wait_stream(side)
    total = y.sum()  # xsc: read y
    torch.cuda.synchronize()
    # Interior outputs sum 16 * 9 ones; edges and corners fewer.
    edge = 16 * (30 * 30 * 9 + 4 * 30 * 6 + 4 * 4)
    print(f"sum of y: {total.item():.0f} (expected {8 * 32 * edge})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
