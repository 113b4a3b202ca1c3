"""Loads the single JSON report under a log_path directory and prints it
back, pretty and key-sorted, one value per line, for FileCheck. Fails when
there is not exactly one report or it is not valid JSON."""
import glob
import json
import os
import sys

reports = glob.glob(os.path.join(sys.argv[1], "report.*"))
if len(reports) != 1:
    sys.exit(f"expected one report under {sys.argv[1]}, found {reports}")
with open(reports[0], encoding="utf-8") as f:
    document = json.load(f)
print(json.dumps(document, indent=1, sort_keys=True))
