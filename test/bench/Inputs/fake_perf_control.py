"""Plays perf record's side of its control fifos (--control fifo:CTL,ACK)
against bench/profile/perf_control.py, as perf 6.1 does: it opens the
control fifo for reading and the acknowledgement fifo for writing, and
answers each command with "ack\\n" and a NUL. Prints what it was told and
what the program's calls returned.

    fake_perf_control.py SRCROOT WORKDIR [nack]
"""
import os
import sys
import threading

srcroot, work = sys.argv[1], sys.argv[2]
answer = "nack" if len(sys.argv) > 3 else "ack"
sys.path.insert(0, os.path.join(srcroot, "bench", "profile"))

import perf_control  # noqa: E402

print("without fifos:", perf_control.sampling(True), perf_control.sampling(False))
perf_control._fifos = None

ctl, ack = os.path.join(work, "ctl"), os.path.join(work, "ack")
os.mkfifo(ctl)
os.mkfifo(ack)
os.environ["XSC_PERF_CTL"], os.environ["XSC_PERF_ACK"] = ctl, ack
told = []


def perf():
    with open(ctl, "r") as commands, open(ack, "w") as replies:
        for line in commands:
            told.append(line.strip())
            replies.write(answer + "\n\0")
            replies.flush()


peer = threading.Thread(target=perf)
peer.start()
try:
    print("enable:", perf_control.sampling(True))
    print("disable:", perf_control.sampling(False))
except RuntimeError as e:
    print("error:", e)
for f in perf_control._fifos:
    f.close()
peer.join()
print("perf was told:", " ".join(told))
