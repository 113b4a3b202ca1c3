"""Sampling only the steady state: a program's side of perf record's
control fifos (bench/profile/profile.sh with STEADY=1).

profile.sh starts `perf record -D -1 --control fifo:CTL,ACK` (events off
until told) and passes the two fifos in XSC_PERF_CTL and XSC_PERF_ACK. A
program calls sampling(True) when its timed part starts and sampling(False)
when it ends; each waits for perf's acknowledgement, so that no sample of
the other part slips in. Without those variables both calls do nothing.
"""
import os

_fifos = None


def _open():
    global _fifos
    if _fifos is None:
        ctl, ack = os.environ.get("XSC_PERF_CTL"), os.environ.get("XSC_PERF_ACK")
        # perf opens the control fifo for reading and the acknowledgement
        # fifo for writing when it starts; the opens below pair with those.
        _fifos = (open(ctl, "w"), open(ack, "r")) if ctl and ack else ()
    return _fifos


def sampling(on):
    """Turns perf's events on or off and waits until perf says it did.
    Returns False when the program runs without perf's control fifos."""
    fifos = _open()
    if not fifos:
        return False
    ctl, ack = fifos
    ctl.write("enable\n" if on else "disable\n")
    ctl.flush()
    # perf ends each acknowledgement with a NUL after its newline.
    reply = ack.readline().replace("\0", "").strip()
    if reply != "ack":
        raise RuntimeError(f"perf_control: perf answered {reply!r} to "
                           f"{'enable' if on else 'disable'}")
    return True
