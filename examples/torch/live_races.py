"""Races on live buffers between two CUDA streams, each with its correct twin.

    python3 live_races.py MODE [--rounds N] [--slot K]

form1         A reused block first touched on another stream. The default
              stream reads `act` behind a few large matmuls; `act` is
              dropped (a same-stream free, legal by itself); a staging
              buffer allocated on the default stream gets act's block and is
              filled under a pack stream that never waited for the default
              stream, so the fill can land before the read.
form1-fixed   The staging buffer is allocated under the pack stream, after
              pack.wait_stream(default).
form1-wait    The staging buffer is allocated on the default stream (act's
              block again) and the pack stream waits for the default stream
              before the fill.
form2         A read before the copy lands. Weights are uploaded with
              non_blocking copies from pinned host tensors under a transfer
              stream, into tensors allocated there; the default stream
              multiplies by them with no wait_stream.
form2-fixed   The default stream waits for the transfer stream first.
form3         A write over a pending read in a hand-made pool: fixed slots
              of one preallocated tensor. Compute (the default stream) reads
              a request's slot behind a few large matmuls, the slot goes
              back to the free list as soon as the read is enqueued, and the
              next request's data is copied into it (non_blocking, from
              pinned memory) on a load stream that waits for nothing.
form3-fixed   The free list keeps, with each slot, an event compute recorded
              after its read; the load stream waits on it before the copy.
form3-double  Double buffering over slots 0 and 1 (correct): while compute
              reads one slot, the load stream fills the other, after waiting
              for the event of that slot's last read.

--slot K picks the slot the form3 free list hands out first (default 0);
its free list is a stack, so the slot just released is handed out next and
every request of a round lands in slot K.

Each round prints whether its results came out intact or corrupted. The
racing modes exit 0 either way (the checker decides); the correct ones exit
1 when a round is corrupted. Lines tagged "# xsc:" are found by the tests.
"""
import argparse
import sys

import torch

MODES = ("form1", "form1-fixed", "form1-wait", "form2", "form2-fixed", "form3", "form3-fixed",
         "form3-double")
RACING = ("form1", "form2", "form3")

BUSY = 4096          # the long work: BUSY x BUSY float matmuls on the default stream
BUSY_STEPS = 3
ACT = 2048           # form 1: act and the staging buffer, ACT x ACT floats (16 MiB)
HIDDEN, BATCH, LAYERS = 2048, 256, 6   # form 2: LAYERS weights of HIDDEN x HIDDEN
SLOTS, SLOT_ROWS, SLOT_COLS, OUT_COLS = 4, 1024, 2048, 512   # form 3: the pool
REQUESTS = 4         # form 3: requests per round


class Workload:
    """Tensors every round shares, made once before the first round."""

    def __init__(self, mode: str):
        gen = torch.Generator().manual_seed(0)
        self.default = torch.cuda.current_stream()
        self.side = torch.cuda.Stream()
        self.busy_in = torch.randn(BUSY, BUSY, generator=gen).cuda()
        self.busy_w = (torch.randn(BUSY, BUSY, generator=gen) / BUSY ** 0.5).cuda()
        if mode.startswith("form1"):
            self.fill = torch.full((ACT, ACT), -1.0).pin_memory()
        elif mode.startswith("form2"):
            # Two sets of weights, used in turn, so that a block handed back
            # from the previous round holds other values than the upload.
            self.host_sets = [[(torch.randn(HIDDEN, HIDDEN, generator=gen) * (2.0 / HIDDEN) ** 0.5)
                               .pin_memory() for _ in range(LAYERS)] for _ in range(2)]
            self.x = torch.randn(BATCH, HIDDEN, generator=gen).cuda()
            self.expected = [self.forward([w.cuda() for w in host]) for host in self.host_sets]
        else:
            self.requests = [torch.randn(SLOT_ROWS, SLOT_COLS, generator=gen).pin_memory()
                             for _ in range(REQUESTS)]
            self.w = (torch.randn(SLOT_COLS, OUT_COLS, generator=gen) / SLOT_COLS ** 0.5).cuda()
            self.expected = [torch.mm(r.cuda(), self.w) for r in self.requests]
            self.pool = torch.zeros(SLOTS, SLOT_ROWS, SLOT_COLS, device="cuda")  # xsc: pool alloc
        torch.cuda.synchronize()

    def busy(self) -> torch.Tensor:
        """Long work on the current stream: what the racing op overtakes."""
        h = self.busy_in
        for _ in range(BUSY_STEPS):
            h = torch.mm(h, self.busy_w)
        return h

    def forward(self, weights) -> torch.Tensor:
        y = self.x
        for w in weights:
            y = torch.relu(torch.mm(y, w))  # xsc: weight use
        return y


def form1_round(work: Workload, mode: str, rnd: int) -> bool:
    pack = work.side
    value = float(rnd + 1)
    act = torch.full((ACT, ACT), value, device="cuda")
    work.busy()
    peak = act.amax(dim=1)  # xsc: act read
    act_block = act.data_ptr()
    del act  # xsc: act drop
    if mode == "form1-fixed":
        pack.wait_stream(work.default)
        with torch.cuda.stream(pack):
            staging = torch.empty(ACT, ACT, device="cuda")  # xsc: staging alloc pack
            staging.copy_(work.fill, non_blocking=True)
    else:
        staging = torch.empty(ACT, ACT, device="cuda")  # xsc: staging alloc default
        if mode == "form1-wait":
            pack.wait_stream(work.default)
        with torch.cuda.stream(pack):
            staging.copy_(work.fill, non_blocking=True)  # xsc: staging fill
    reused = staging.data_ptr() == act_block
    torch.cuda.synchronize()
    print(f"  round {rnd}: staging in act's block: {'yes' if reused else 'no'}")
    return not bool((peak == value).all())


def form2_round(work: Workload, mode: str, rnd: int) -> bool:
    transfer = work.side
    host_set = rnd % 2
    weights = []
    with torch.cuda.stream(transfer):
        for host in work.host_sets[host_set]:
            w = torch.empty(HIDDEN, HIDDEN, device="cuda")
            w.copy_(host, non_blocking=True)  # xsc: weight upload
            weights.append(w)
    if mode == "form2-fixed":
        work.default.wait_stream(transfer)
    y = work.forward(weights)
    torch.cuda.synchronize()
    return not torch.allclose(y, work.expected[host_set], rtol=1e-3, atol=1e-3)


def form3_round(work: Workload, mode: str, rnd: int, first_slot: int) -> bool:
    load, pool = work.side, work.pool
    # A stack of (slot, event of its last read or None); first_slot on top.
    free = [(s, None) for s in range(SLOTS) if s != first_slot] + [(first_slot, None)]
    slot, _ = free.pop()
    with torch.cuda.stream(load):
        pool[slot].copy_(work.requests[0], non_blocking=True)
    outs, slots_used = [], set()
    for i in range(REQUESTS):
        work.default.wait_stream(load)  # compute waits for request i's data
        work.busy()
        outs.append(torch.mm(pool[slot], work.w))  # xsc: slot read
        slots_used.add(slot)
        done = work.default.record_event() if mode == "form3-fixed" else None
        free.append((slot, done))  # released as soon as the read is enqueued
        if i + 1 == REQUESTS:
            break
        slot, read_done = free.pop()
        if read_done is not None:
            load.wait_event(read_done)
        with torch.cuda.stream(load):
            pool[slot].copy_(work.requests[i + 1], non_blocking=True)  # xsc: slot load
    torch.cuda.synchronize()
    print(f"  round {rnd}: slots used: {sorted(slots_used)}")
    return any(not torch.allclose(out, want, rtol=1e-3, atol=1e-3)
               for out, want in zip(outs, work.expected))


def form3_double_round(work: Workload, rnd: int) -> bool:
    load, pool = work.side, work.pool
    last_read = [None, None]  # per slot, the event recorded after its last read
    with torch.cuda.stream(load):
        pool[0].copy_(work.requests[0], non_blocking=True)
    outs = []
    for i in range(REQUESTS):
        slot = i % 2
        work.default.wait_stream(load)  # request i's data
        if i + 1 < REQUESTS:
            other = (i + 1) % 2
            if last_read[other] is not None:
                load.wait_event(last_read[other])
            with torch.cuda.stream(load):
                pool[other].copy_(work.requests[i + 1], non_blocking=True)  # xsc: double load
        work.busy()
        outs.append(torch.mm(pool[slot], work.w))  # xsc: double read
        last_read[slot] = work.default.record_event()
    torch.cuda.synchronize()
    print(f"  round {rnd}: slots used: [0, 1]")
    return any(not torch.allclose(out, want, rtol=1e-3, atol=1e-3)
               for out, want in zip(outs, work.expected))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--slot", type=int, default=0)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("need --rounds >= 1")
    if not 0 <= args.slot < SLOTS:
        parser.error(f"need 0 <= --slot < {SLOTS}")
    if not torch.cuda.is_available():
        print("live_races.py: no CUDA device available", file=sys.stderr)
        return 2

    work = Workload(args.mode)
    print(f"{args.mode}: default stream {work.default.cuda_stream:#x}, "
          f"side stream {work.side.cuda_stream:#x}", flush=True)
    corrupted = 0
    for rnd in range(args.rounds):
        if args.mode.startswith("form1"):
            bad = form1_round(work, args.mode, rnd)
        elif args.mode.startswith("form2"):
            bad = form2_round(work, args.mode, rnd)
        elif args.mode == "form3-double":
            bad = form3_double_round(work, rnd)
        else:
            bad = form3_round(work, args.mode, rnd, args.slot)
        corrupted += bad
        print(f"  round {rnd}: {'CORRUPTED' if bad else 'intact'}", flush=True)
    verdict = "PASS" if corrupted == 0 else "FAIL"
    print(f"{args.mode}: [{verdict}] {corrupted}/{args.rounds} rounds corrupted", flush=True)
    if corrupted and args.mode not in RACING:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
