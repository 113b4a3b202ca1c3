"""Prints, for each finding of the JSON Lines reports in a directory, where
its use and its earlier use fall in the allocation:

    KIND: write at pool offset N, earlier use at pool offset M

Usage: slot_offsets.py DIR. Exits 1 when the directory holds no finding."""
import json
import os
import sys


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: slot_offsets.py DIR", file=sys.stderr)
        return 2
    found = 0
    for name in sorted(os.listdir(argv[1])):
        with open(os.path.join(argv[1], name), encoding="utf-8") as report:
            for line in report:
                finding = json.loads(line)
                if "kind" not in finding:
                    continue
                found += 1
                base = finding["alloc"]["addr"]
                earlier = finding.get("earlier")
                earlier_text = ("none" if earlier is None
                                else f"pool offset {earlier['addr'] - base}")
                print(f"{finding['kind']}: write at pool offset {finding['use']['addr'] - base}, "
                      f"earlier use at {earlier_text}")
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
