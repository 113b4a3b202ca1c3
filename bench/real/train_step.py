"""Real training steps, timed in their steady state, for bench/real/run.py.

    python3 train_step.py eager|compile|hf|fsdp2|ddp [--steps N] [--warmup N]

eager    6 blocks Linear-GELU-Linear-LayerNorm, d=1024, batch 64x128 tokens,
         bfloat16 autocast, AdamW (the issue's step)
compile  the same model under torch.compile (default mode): the first
         --warmup steps include compilation, reported apart
hf       Hugging Face transformers GPT-2 (4 layers, d=256) built from a
         GPT2Config (no download), AdamW
fsdp2    the eager model with fully_shard per block and at the root, over a
         one-rank NCCL group
ddp      the eager model in DistributedDataParallel over a one-rank group

Prints one line `XSC_STEP workload=... steady_ms=... warmup_s=...`:
steady_ms is the median ms per step over the steps after the warm-up
(each timed with a CUDA synchronization at its end), quartiles_ms their
first and third quartiles, halves_ms the medians of their first and second
halves (a cost that is still falling shows as a first half above the
second), warmup_s the time of the warm-up steps
(compilation for `compile`), host_ms the median time until step() returned
(its work enqueued, not finished). Under the runtime with
XSC_PROFILE=parts it also prints `XSC_PARTS name=us ...`: each part of the
runtime's own host time per timed step (xsc_runtime_parts, read before and
after the timed steps). Under the runtime it prints the PyTorch adapter's
counters (XSC_OPS) and the kernel argument words (XSC_WORDS) per timed
step, and the runtime's view of the allocations after them (XSC_VIEW:
why launches are looked up rather than handed over). With or without it
it prints `XSC_SCHED name=cpu/wait/vol/invol ...`: per timed step and
thread name, ms on a CPU, ms runnable but waiting for one, and voluntary
and involuntary context switches (/proc/self/task). Under
bench/profile/profile.sh with STEADY=1, perf samples the timed steps only
(bench/profile/perf_control.py). Last it
prints `XSC_PHASES started=... imported=... ready=... warm=... stepped=...
ended=...`, the wall-clock times (time.time()) at which the script started,
torch was imported, the model and data were ready, the warm-up and the
timed steps ended, and main() returned: run.py splits the process's wall
time by them.
"""
import time

# Wall-clock marks of the process's phases (XSC_PHASES), from before torch
# is imported: run.py sets them against the process's start and end.
PHASES = {"started": time.time()}

import argparse  # noqa: E402
import ctypes  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402

PHASES["imported"] = time.time()

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples", "torch", "real"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "profile"))

from perf_control import sampling  # noqa: E402  (perf samples the timed steps only)


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = torch.nn.Linear(d, 4 * d)
        self.fc2 = torch.nn.Linear(4 * d, d)
        self.norm = torch.nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))


def mlp(d=1024, blocks=6):
    return torch.nn.Sequential(*[Block(d) for _ in range(blocks)])


def runtime_parts():
    """{part: (ns, count)} of the preloaded runtime's timed parts, or None."""
    try:
        read = ctypes.CDLL(None).xsc_runtime_parts
    except (AttributeError, OSError):
        return None
    capacity = 16
    names = (ctypes.c_char_p * capacity)()
    ns = (ctypes.c_uint64 * capacity)()
    count = (ctypes.c_uint64 * capacity)()
    n = read(names, ns, count, capacity)
    return {names[i].decode(): (ns[i], count[i]) for i in range(n)} or None


def runtime_counters(function, n):
    """The n counters the preloaded runtime's `function` fills (each out
    parameter a uint64_t*), or None without the runtime."""
    try:
        read = getattr(ctypes.CDLL(None), function)
    except (AttributeError, OSError):
        return None
    counts = [ctypes.c_uint64() for _ in range(n)]
    read(*(ctypes.byref(c) for c in counts))
    return tuple(c.value for c in counts)


def launch_words():
    """(filtered, looked up, missed, handed over) kernel argument words of the
    preloaded runtime (xsc_runtime_launch_words), or None."""
    return runtime_counters("xsc_runtime_launch_words", 4)


def view_census():
    """(live, other, other by inheritance, mixed residue bytes) of the
    preloaded runtime's view of the allocations (xsc_runtime_view_census),
    or None."""
    return runtime_counters("xsc_runtime_view_census", 4)


def thread_schedule():
    """{thread name: [on-CPU ns, run-queue wait ns, voluntary switches,
    involuntary switches]} summed over this process's threads of each name
    (/proc/self/task/*/schedstat and status), or {} where /proc lacks them."""
    threads = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return threads
    for tid in tids:
        base = f"/proc/self/task/{tid}"
        try:
            with open(f"{base}/comm") as f:
                name = f.read().strip()
            with open(f"{base}/schedstat") as f:
                on_cpu, waiting = (int(x) for x in f.read().split()[:2])
            switches = {}
            with open(f"{base}/status") as f:
                for line in f:
                    key, _, value = line.partition(":")
                    if key in ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"):
                        switches[key] = int(value)
        except (OSError, ValueError):
            continue  # the thread ended meanwhile
        sums = threads.setdefault(name, [0, 0, 0, 0])
        for i, v in enumerate((on_cpu, waiting, switches.get("voluntary_ctxt_switches", 0),
                               switches.get("nonvoluntary_ctxt_switches", 0))):
            sums[i] += v
    return threads


def operator_stats():
    """{counter: int} of the loaded PyTorch adapter (xsc_torch_operator_stats), or None."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "libxstream_torch" in line}
    except OSError:
        return None
    for path in paths:
        try:
            stats = ctypes.CDLL(path).xsc_torch_operator_stats
        except (AttributeError, OSError):
            continue
        stats.restype = ctypes.c_char_p
        words = (word.split("=", 1) for word in stats().decode().split())
        return {name: int(value) for name, value in words if value.isdigit()}
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=["eager", "compile", "hf", "fsdp2", "ddp"])
    parser.add_argument("--steps", type=int, default=100, help="timed steps after the warm-up")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--item", action="store_true",
                        help="read the loss on the host at every step (loss.item())")
    parser.add_argument("--batch", type=int, default=64,
                        help="sequences of 128 tokens a step (eager, compile, fsdp2, ddp)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("train_step.py: no CUDA device available", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    device = torch.device("cuda", 0)
    finish = None
    if args.workload in ("fsdp2", "ddp"):
        from single_rank import finish, init_single_rank
        device = init_single_rank("train_step.py")

    if args.workload == "hf":
        from transformers import GPT2Config, GPT2LMHeadModel
        config = GPT2Config(vocab_size=4096, n_positions=256, n_embd=256, n_layer=4, n_head=4)
        model = GPT2LMHeadModel(config).to(device)
        batch = torch.randint(0, 4096, (32, 256), device=device)

        def loss_of():
            return model(input_ids=batch, labels=batch).loss
    else:
        model = mlp().to(device)
        if args.workload == "fsdp2":
            from torch.distributed.fsdp import fully_shard
            for block in model:
                fully_shard(block)
            fully_shard(model)
        elif args.workload == "ddp":
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0])
        x = torch.randn(args.batch, 128, 1024, device=device)
        target = torch.randn(args.batch, 128, 1024, device=device)
        forward = torch.compile(model) if args.workload == "compile" else model

        def loss_of():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return torch.nn.functional.mse_loss(forward(x).float(), target)

    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of()
        loss.backward()
        optimizer.step()
        if args.item:
            losses.append(loss.item())
        return loss

    losses = []

    PHASES["ready"] = time.time()
    t0 = time.perf_counter()
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    warmup_s = time.perf_counter() - t0
    PHASES["warm"] = time.time()
    parts_before = runtime_parts()
    ops_before = operator_stats()
    words_before = launch_words()
    times = []
    host = []  # until the step's work is enqueued
    schedule_before = thread_schedule()
    sampling(True)
    for _ in range(args.steps):
        start = time.perf_counter()
        loss = step()
        host.append((time.perf_counter() - start) * 1e3)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    sampling(False)
    schedule_after = thread_schedule()
    PHASES["stepped"] = time.time()
    if not torch.isfinite(loss.detach()).item():
        print("train_step.py: the loss is not finite", file=sys.stderr)
        return 1
    parts_after = runtime_parts()
    ops_after = operator_stats()
    words_after = launch_words()
    census = view_census()
    quartiles = statistics.quantiles(times, n=4) if len(times) > 1 else times * 3
    half = max(1, len(times) // 2)
    print(f"XSC_STEP workload={args.workload} steady_ms={statistics.median(times):.3f} "
          f"warmup_s={warmup_s:.3f} steps={args.steps} host_ms={statistics.median(host):.3f} "
          f"quartiles_ms={quartiles[0]:.3f}/{quartiles[2]:.3f} "
          f"halves_ms={statistics.median(times[:half]):.3f}/{statistics.median(times[-half:]):.3f}",
          flush=True)
    if parts_before and parts_after:
        per_step = " ".join(
            f"{name}={(parts_after[name][0] - ns) / 1e3 / args.steps:.1f}"
            f"/{(parts_after[name][1] - count) / args.steps:.0f}"
            for name, (ns, count) in parts_before.items())
        print(f"XSC_PARTS {per_step}", flush=True)
    if ops_before and ops_after:
        # Per timed step: the operators the PyTorch adapter's RecordFunction
        # callback saw (on while a device use of pinned memory may be
        # pending), how often it went on, the writer operators followed (and
        # of them those through unboxed kernels), and the Python stacks that
        # took the GIL or were read without it.
        per_step = " ".join(
            f"{name}={(ops_after[name] - ops_before[name]) / args.steps:.1f}"
            for name in ("callback_calls", "callback_switched_on", "host_calls", "writer_calls",
                         "unboxed_calls", "stacks_gil_taken", "stacks_known_without_gil")
            if name in ops_before and name in ops_after)
        print(f"XSC_OPS {per_step}", flush=True)
    if words_before and words_after:
        # Per timed step: kernel argument words in the span of the tracked
        # allocations dropped by their page, looked up, found in none, and
        # handed to the checker's thread unlooked.
        per_step = " ".join(
            f"{name}={(after - before) / args.steps:.1f}"
            for name, before, after in zip(("filtered", "looked_up", "missed", "handed_over"),
                                           words_before, words_after))
        print(f"XSC_WORDS {per_step}", flush=True)
    if census:
        # After the timed steps: the live allocations the runtime's view
        # holds, those launches are looked up for (another agent's), of
        # them the ones only for what their memory's earlier occupants did,
        # and the freed memory more than one agent used (MiB).
        live, other, inherited, mixed = census
        print(f"XSC_VIEW live={live} other={other} other_by_inheritance={inherited} "
              f"mixed_residue_mib={mixed / 2**20:.1f}", flush=True)
    if schedule_after:
        # Per timed step and thread name (threads that ran at least 10 us a
        # step): time on a CPU, time runnable but waiting for one, and the
        # voluntary (blocking) and involuntary switches. The step's wall
        # time less its threads' CPU time is time they spent blocked.
        items = []
        for name, after in sorted(schedule_after.items(), key=lambda kv: -kv[1][0]):
            before = schedule_before.get(name, [0, 0, 0, 0])
            d = [(a - b) / args.steps for a, b in zip(after, before)]
            if d[0] < 10e3:
                continue
            items.append(f"{name.replace(' ', '_')}={d[0] / 1e6:.3f}/{d[1] / 1e6:.3f}"
                         f"/{d[2]:.1f}/{d[3]:.1f}")
        print("XSC_SCHED " + " ".join(items), flush=True)
    if finish is not None:
        finish()
    PHASES["ended"] = time.time()
    print("XSC_PHASES " + " ".join(f"{k}={v:.6f}" for k, v in PHASES.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
