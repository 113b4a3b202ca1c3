"""A stand-in for train_step.py in bench/real/python_calls.py's test: three
timed steps between the sampling marks, each calling `layer` twice and
len() once; with XSC_FAKE_EXTRA_CALL=1 each step also calls `hook`."""
import os
import sys

from perf_control import sampling


def layer(x):
    return x + 1


def hook(x):
    return x


def main():
    extra = os.environ.get("XSC_FAKE_EXTRA_CALL") == "1"
    steps = int(sys.argv[sys.argv.index("--steps") + 1])
    x = 0
    sampling(True)
    for _ in range(steps):
        x = layer(layer(x)) + len("ab")
        if extra:
            x = hook(x)
    sampling(False)
    return 0 if x == 4 * steps else 1
