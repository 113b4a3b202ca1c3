#!/usr/bin/env python3
"""Per-operator cost of the PyTorch adapter's operator-write hook, on the CPU.

The dispatcher's path for an operator call is the same on the CPU as on a
GPU, so the hook's cost per operator is measured here without one: loops of
small CPU operators, each in a fresh process per variant, interleaved:

  native           torch alone
  runtime, no hook libxstream_check.so preloaded, torch_op_access=0
  record-function  the hook as a global RecordFunction callback with boxed
                   inputs (XSC_TORCH_OP_HOOK=record-function: the fallback,
                   and what every operator paid before)
  dispatcher       writer kernels on the adapter's dispatch key (default)

The hooked variants follow CPU tensors as device tensors
(XSC_TORCH_OP_DEVICE=cpu), so an in-place or out= operator pays what it
pays on a GPU but the feeding (no work is enqueued, so nothing is fed).

Usage: bench/torch_op_hook.py [--build build] [--rounds 5] [--iters 20000]
Prints ns/op per loop and variant (median over rounds) and each variant's
ratio to native, pair by pair (the median of the rounds' ratios).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

VARIANTS = ["native", "runtime, no hook", "record-function", "dispatcher"]


def worker(iters):
    import torch
    torch.set_num_threads(1)
    stats = None
    if os.environ.get("XSC_BENCH_INSTALL"):
        import ctypes
        adapter = ctypes.CDLL(os.environ["XSC_BENCH_INSTALL"])
        adapter.xsc_torch_operator_stats.restype = ctypes.c_char_p
        # The runtime attaches the adapter at its first CUDA call; there is
        # none here, so attach it to the runtime's table by hand.
        runtime = ctypes.CDLL(os.environ["LD_PRELOAD"])
        runtime.xsc_runtime_host_api.restype = ctypes.c_void_p
        adapter.xsc_torch_attach.argtypes = [ctypes.c_void_p]
        adapter.xsc_torch_attach(runtime.xsc_runtime_host_api())
        if adapter.xsc_torch_install_operators() != 0:
            sys.exit("torch_op_hook: the operator hook could not be installed")
        stats = adapter.xsc_torch_operator_stats
    x, y, out = torch.ones(16), torch.ones(16), torch.empty(16)
    w1 = torch.randn(16, 16, requires_grad=True)
    w2 = torch.randn(16, 16, requires_grad=True)
    opt = torch.optim.SGD([w1, w2], lr=1e-3, foreach=True)
    inp = torch.randn(4, 16)
    params = [torch.ones(4) for _ in range(150)]

    def add():
        torch.add(x, y)

    def add_():
        x.add_(1e-9)

    def mul_out():
        torch.mul(x, 2, out=out)

    def foreach_mul_():  # an optimizer's update: one in-place operator over many tensors
        torch._foreach_mul_(params, 1.0)

    def view_ops():  # metadata-only operators, the bulk of a step's calls
        x.view(4, 4).t().reshape(16)

    def step():  # a tiny training step: forward, backward, foreach update
        h = torch.nn.functional.gelu(inp @ w1)
        loss = torch.nn.functional.layer_norm(h @ w2, (16,)).sum()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    # Dispatcher calls per loop body (outer and nested), counted once with
    # the profiler's own hook.
    results = {}
    for name, fn, per in [("torch.add (no write)", add, 1), ("x.add_ (in-place)", add_, 1),
                          ("torch.mul(out=)", mul_out, 1),
                          ("_foreach_mul_, 150 tensors", foreach_mul_, 1),
                          ("view/t/reshape", view_ops, 3),
                          ("tiny training step", step, None)]:
        for _ in range(200):
            fn()
        n = iters if per is not None else max(iters // 50, 50)
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        t1 = time.perf_counter_ns()
        results[name] = (t1 - t0) / n  # ns per loop body
    out_json = {"ns": results}
    if stats is not None:
        out_json["stats"] = stats().decode()
    print("XSC_BENCH " + json.dumps(out_json), flush=True)


def run_variant(variant, build, iters):
    env = dict(os.environ)
    lib = os.path.join(build, "lib")
    for k in ("LD_PRELOAD", "XSC_OPTIONS", "XSC_TORCH_OP_HOOK", "XSC_BENCH_INSTALL"):
        env.pop(k, None)
    if variant != "native":
        env["LD_PRELOAD"] = os.path.join(lib, "libxstream_check.so")
        env["XSC_TORCH_OP_DEVICE"] = "cpu"
    if variant == "runtime, no hook":
        env["XSC_OPTIONS"] = "torch_op_access=0"
    if variant in ("record-function", "dispatcher"):
        env["XSC_BENCH_INSTALL"] = os.path.join(lib, "libxstream_torch.so")
    if variant == "record-function":
        env["XSC_TORCH_OP_HOOK"] = "record-function"
    proc = subprocess.run([sys.executable, __file__, "--worker", "--iters", str(iters)],
                          env=env, capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("XSC_BENCH "):
            return json.loads(line[len("XSC_BENCH "):])
    sys.exit(f"torch_op_hook: variant {variant!r} printed no result (exit {proc.returncode}): "
             + (proc.stderr.strip().splitlines() or ["no output"])[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20000)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.iters)
        return
    for needed in ("libxstream_check.so", "libxstream_torch.so"):
        if not os.path.exists(os.path.join(args.build, "lib", needed)):
            sys.exit(f"torch_op_hook: {args.build}/lib/{needed} not found (build xstream_check "
                     "and xstream_torch first)")
    runs = {v: [] for v in VARIANTS}
    stats = {}
    for _ in range(args.rounds):
        for v in VARIANTS:
            r = run_variant(v, args.build, args.iters)
            runs[v].append(r["ns"])
            if "stats" in r:
                stats[v] = r["stats"]
    loops = list(runs["native"][0].keys())
    width = max(len(loop) for loop in loops)
    print(f"{'loop':<{width}}  " + "  ".join(f"{v:>18}" for v in VARIANTS))
    for loop in loops:
        cells = []
        for v in VARIANTS:
            med = statistics.median(r[loop] for r in runs[v])
            ratio = statistics.median(r[loop] / n[loop] for r, n in zip(runs[v], runs["native"]))
            cells.append(f"{med:9.0f} ns {ratio:4.2f}x")
        print(f"{loop:<{width}}  " + "  ".join(f"{c:>18}" for c in cells))
    print(f"(ns per loop body, median of {args.rounds} rounds; ratio: median of each round's "
          "ratio to the native run of its round)")
    for v, s in stats.items():
        print(f"{v}: {s}")


if __name__ == "__main__":
    main()
