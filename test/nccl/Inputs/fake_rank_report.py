"""Plays one rank of a checked job without CUDA: writes the report=json file
the runtime would write for this process (name from log_path, RANK and the
pid) with one finding whose fingerprint is FAKE_FINGERPRINT (none when it
is empty), then exits with FAKE_STATUS (default 0). Prints what it
inherited, so a test can see the launcher passed it on.
"""
import json
import os
import re
import sys


def option(name, text):
    match = re.search(r"(?:^|[ :,])" + name + r"=([^ :,]*)", text)
    return match.group(1) if match else None


def main():
    options = os.environ.get("XSC_OPTIONS", "")
    preload = os.environ.get("LD_PRELOAD", "")
    rank = os.environ.get("RANK")
    pid = os.getpid()
    print(f"rank {rank} pid {pid}: preload={'libfake' in preload} "
          f"exitcode={option('exitcode', options)}", flush=True)
    prefix = option("log_path", options)
    if not prefix:
        return 3
    path = f"{prefix}.rank{rank}.{pid}" if rank is not None else f"{prefix}.{pid}"
    fingerprint = os.environ.get("FAKE_FINGERPRINT", "00000000feedface")
    lines = []
    if fingerprint:
        finding = {"kind": "unordered-free", "fingerprint": fingerprint, "count": 2, "pid": pid,
                   "site": "ddp_allreduce.py:64 in main",
                   "fix": "record an event on the side stream"}
        if rank is not None:
            finding["rank"] = int(rank)
        lines.append(json.dumps(finding))
    summary = {"findings": 1 if fingerprint else 0, "suppressed": 0, "pid": pid}
    lines.append(json.dumps({"summary": summary}))
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")
    return int(os.environ.get("FAKE_STATUS", "0"))


if __name__ == "__main__":
    sys.exit(main())
