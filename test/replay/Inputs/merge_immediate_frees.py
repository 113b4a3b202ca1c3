#!/usr/bin/env python3
"""Rewrites a trace so that each deferred caching-allocator free followed at
once by its completion (the pair PyTorch's allocator reports for a block
with no recorded stream) becomes one immediate free.

    merge_immediate_frees.py IN OUT

Prints how many pairs were merged and how many completions the trace had.
"""
import json
import sys


def main(argv):
    if len(argv) != 3:
        print("usage: merge_immediate_frees.py IN OUT", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        lines = f.read().splitlines()
    out = []
    merged = 0
    i = 0
    while i < len(lines):
        record = json.loads(lines[i])
        if (record.get("t") == "free" and record.get("d") and i + 1 < len(lines)):
            following = json.loads(lines[i + 1])
            if following.get("t") == "free_done" and following.get("a") == record.get("a"):
                del record["d"]
                out.append(json.dumps(record, separators=(",", ":")))
                merged += 1
                i += 2
                continue
        out.append(lines[i])
        i += 1
    with open(argv[2], "w") as f:
        f.write("\n".join(out) + "\n")
    completions = sum('"t":"free_done"' in line for line in lines)
    print(f"merged {merged} of {completions}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
