#!/usr/bin/env python3
"""Reads the timeline pictures of one finding and prints what they show.

Usage: check_timeline.py DIR N [--max-ops=M]
Parses DIR/finding-N.json (Chrome trace-event format) and DIR/finding-N.svg
(with xml.etree), checks what a trace viewer relies on, and prints one line
per lane, slice, marker and flow arrow, for FileCheck:

  lane LANE
  slice LANE: NAME [hazard] [late-wait]
  marker LANE: NAME ...
  elided LANE: ...N ops...
  flow CATEGORY: LANE NAME -> LANE NAME
  svg TEXT         (the SVG's texts that name a hazard, late wait or the clock)

Exits non-zero, after one "timeline violation: ..." line, when the JSON does
not parse, a flow does not land in a slice, a slice lacks a lane name, two
slices of a lane overlap without nesting, or the
SVG is not well-formed XML, or (--max-ops) the stream and host lanes draw
more than M ops.
"""
import json
import os
import sys
import xml.etree.ElementTree as ET

SVG_NS = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print("timeline violation: " + msg)
    sys.exit(1)


def main():
    base = os.path.join(sys.argv[1], "finding-%s" % sys.argv[2])
    max_ops = None
    for arg in sys.argv[3:]:
        if arg.startswith("--max-ops="):
            max_ops = int(arg.split("=", 1)[1])
    try:
        with open(base + ".json") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s.json: %s" % (base, e))
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        fail("no traceEvents array")
    clock = doc.get("otherData", {}).get("clock", "")
    if "logical clock" not in clock or "not GPU time" not in clock:
        fail("otherData.clock does not say the time is the logical clock")

    names = {}
    order = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
        if e.get("ph") == "M" and e.get("name") == "thread_sort_index":
            order[(e["pid"], e["tid"])] = (e["pid"], e["args"]["sort_index"])
    for key in sorted(names, key=lambda k: order.get(k, k)):
        print("lane " + names[key])

    slices = []
    for e in events:
        if e.get("ph") != "X":
            continue
        for field in ("name", "ts", "dur", "pid", "tid", "cat"):
            if field not in e:
                fail("a slice lacks '%s'" % field)
        if e["dur"] < 0:
            fail("slice %r has a negative duration" % e["name"])
        lane = names.get((e["pid"], e["tid"]))
        if lane is None:
            fail("slice %r is on a lane without a thread_name" % e["name"])
        slices.append(e)
        flags = ""
        if e.get("args", {}).get("hazard"):
            flags += " [hazard]"
        if e.get("args", {}).get("late_wait"):
            flags += " [late-wait]"
        kind = {"op": "slice", "marker": "marker", "elided": "elided"}.get(e["cat"], e["cat"])
        print("%s %s: %s%s" % (kind, lane, e["name"], flags))

    # Trace viewers drop slices of one lane that overlap without nesting.
    by_lane = {}
    for e in slices:
        by_lane.setdefault((e["pid"], e["tid"]), []).append(e)
    for lane_slices in by_lane.values():
        lane_slices.sort(key=lambda e: (e["ts"], -e["dur"]))
        for a, b in zip(lane_slices, lane_slices[1:]):
            if b["ts"] < a["ts"] + a["dur"] < b["ts"] + b["dur"]:
                fail("slices %r and %r overlap without nesting" % (a["name"], b["name"]))

    # Ops are what the top lanes draw (slices and markers); blocks repeat them.
    top_pid = min(pid for pid, _ in names) if names else 0
    ops = [s for s in slices if s["pid"] == top_pid and s["cat"] in ("op", "marker")]
    if max_ops is not None and len(ops) > max_ops:
        fail("%d ops drawn, more than %d" % (len(ops), max_ops))

    def enclosing(e):
        # How trace viewers bind a flow event: the slice on its thread whose
        # span holds its timestamp.
        for s in slices:
            if (s["pid"], s["tid"]) == (e["pid"], e["tid"]) and s["ts"] <= e["ts"] <= s["ts"] + s["dur"]:
                return s
        fail("flow %s at ts %s binds to no slice" % (e.get("id"), e.get("ts")))

    starts = {e["id"]: e for e in events if e.get("ph") == "s"}
    ends = {e["id"]: e for e in events if e.get("ph") == "f"}
    if set(starts) != set(ends):
        fail("flow ids without both ends: %s" % sorted(set(starts) ^ set(ends)))
    for fid in sorted(starts):
        s, f = starts[fid], ends[fid]
        if f.get("bp") != "e":
            fail("flow %s does not bind to its enclosing slice" % fid)
        a, b = enclosing(s), enclosing(f)
        print("flow %s: %s %s -> %s %s" % (s["cat"], names[(a["pid"], a["tid"])], a["name"],
                                           names[(b["pid"], b["tid"])], b["name"]))

    try:
        root = ET.parse(base + ".svg").getroot()
    except (OSError, ET.ParseError) as e:
        fail("%s.svg: %s" % (base, e))
    if root.tag != SVG_NS + "svg":
        fail("the SVG's root is %s" % root.tag)
    texts = ["".join(t.itertext()) for t in root.iter(SVG_NS + "text")]
    for t in texts:
        if any(word in t for word in ("late wait", "missing edge", "race", "logical clock", "finding")):
            print("svg " + t)
    print("timeline ok: %d lanes, %d slices, %d flows" % (len(names), len(slices), len(starts)))


if __name__ == "__main__":
    main()
