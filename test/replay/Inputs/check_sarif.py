#!/usr/bin/env python3
"""Checks a SARIF log for the properties SARIF 2.1.0 requires.

Usage: check_sarif.py LOG [EXPECTED_RESULTS]
Prints "sarif ok: N result(s)" or the first violation, and exits non-zero on
a violation. The required properties follow the SARIF 2.1.0 JSON schema:
sarifLog{version, runs}, run{tool}, tool{driver}, toolComponent{name},
reportingDescriptor{id}, result{message}, message{text|id},
physicalLocation{artifactLocation|address}, region.startLine >= 1.
"""
import json
import sys


def fail(msg):
    print("sarif violation: " + msg)
    sys.exit(1)


def require(obj, key, where, kind=None):
    if not isinstance(obj, dict) or key not in obj:
        fail("%s lacks required property '%s'" % (where, key))
    if kind is not None and not isinstance(obj[key], kind):
        fail("%s.%s has the wrong type" % (where, key))
    return obj[key]


def check_message(msg, where):
    if not isinstance(msg, dict) or not ("text" in msg or "id" in msg):
        fail(where + " must have 'text' or 'id'")
    if "text" in msg and not isinstance(msg["text"], str):
        fail(where + ".text must be a string")


def check_location(loc, where, rule_ids):
    if not isinstance(loc, dict):
        fail(where + " must be an object")
    if "physicalLocation" in loc:
        phys = loc["physicalLocation"]
        if "artifactLocation" not in phys and "address" not in phys:
            fail(where + ".physicalLocation needs artifactLocation or address")
        if "artifactLocation" in phys:
            uri = require(phys["artifactLocation"], "uri", where + ".artifactLocation", str)
            if not uri:
                fail(where + " has an empty uri")
        if "region" in phys:
            line = require(phys["region"], "startLine", where + ".region", int)
            if line < 1:
                fail(where + ".region.startLine must be >= 1")
    if "message" in loc:
        check_message(loc["message"], where + ".message")


def main():
    with open(sys.argv[1]) as f:
        log = json.load(f)
    if require(log, "version", "sarifLog", str) != "2.1.0":
        fail("version must be 2.1.0")
    require(log, "$schema", "sarifLog", str)
    runs = require(log, "runs", "sarifLog", list)
    if len(runs) != 1:
        fail("expected exactly one run")
    run = runs[0]
    driver = require(require(run, "tool", "run", dict), "driver", "tool", dict)
    if require(driver, "name", "driver", str) != "xstream-check":
        fail("driver.name must be xstream-check")
    rules = require(driver, "rules", "driver", list)
    rule_ids = []
    for i, rule in enumerate(rules):
        rule_ids.append(require(rule, "id", "rules[%d]" % i, str))
    expected_rules = ["xstream-unordered-free", "xstream-use-after-free", "xstream-use-before-ready",
                      "xstream-reuse-race", "xstream-write-after-read"]
    if rule_ids != expected_rules:
        fail("rules are %r, expected %r" % (rule_ids, expected_rules))
    results = require(run, "results", "run", list)
    for i, res in enumerate(results):
        where = "results[%d]" % i
        check_message(require(res, "message", where), where + ".message")
        rule = require(res, "ruleId", where, str)
        if rule not in rule_ids:
            fail(where + ".ruleId %r names no rule" % rule)
        if "ruleIndex" in res and rule_ids[res["ruleIndex"]] != rule:
            fail(where + ".ruleIndex does not match ruleId")
        if res.get("level") not in ("none", "note", "warning", "error"):
            fail(where + ".level is not a SARIF level")
        locs = require(res, "locations", where, list)
        if not locs:
            fail(where + " has no location")
        for j, loc in enumerate(locs):
            check_location(loc, "%s.locations[%d]" % (where, j), rule_ids)
        ids = set()
        for j, loc in enumerate(res.get("relatedLocations", [])):
            check_location(loc, "%s.relatedLocations[%d]" % (where, j), rule_ids)
            if "id" in loc:
                if loc["id"] in ids:
                    fail(where + " repeats relatedLocations id %r" % loc["id"])
                ids.add(loc["id"])
        fps = require(res, "partialFingerprints", where, dict)
        if not fps or not all(isinstance(v, str) and v for v in fps.values()):
            fail(where + ".partialFingerprints must map to non-empty strings")
    if len(sys.argv) > 2 and len(results) != int(sys.argv[2]):
        fail("%d result(s), expected %s" % (len(results), sys.argv[2]))
    notes = sum(1 for r in results if r.get("level") == "note")
    print("sarif ok: %d result(s)" % len(results) + (" (%d note)" % notes if notes else ""))


if __name__ == "__main__":
    main()
