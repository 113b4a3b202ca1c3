"""Loads the single report=json report under a log_path directory and prints
it back for FileCheck: the report is JSON Lines (one object per finding, then
one summary object), and each object is printed pretty and key-sorted, one
value per line, after a "finding N:" or "summary:" heading. Fails when there
is not exactly one report, a line is not a JSON object, or the report does not
end with its one summary object."""
import glob
import json
import os
import sys

reports = glob.glob(os.path.join(sys.argv[1], "report.*"))
if len(reports) != 1:
    sys.exit(f"expected one report under {sys.argv[1]}, found {reports}")
objects = []
with open(reports[0], encoding="utf-8") as f:
    for number, line in enumerate(f, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as e:
            sys.exit(f"{reports[0]}:{number}: not JSON: {e}")
        if not isinstance(value, dict):
            sys.exit(f"{reports[0]}:{number}: not a JSON object")
        objects.append(value)
summaries = [i for i, o in enumerate(objects) if "summary" in o]
if summaries != [len(objects) - 1]:
    sys.exit(f"{reports[0]}: expected one summary object, last; found it at {summaries}")
for index, value in enumerate(objects[:-1]):
    print(f"finding {index}:")
    print(json.dumps(value, indent=1, sort_keys=True))
print("summary:")
print(json.dumps(objects[-1]["summary"], indent=1, sort_keys=True))
