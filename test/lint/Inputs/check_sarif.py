"""Checks a SARIF log for the fields SARIF 2.1.0 requires (and that GitHub
code scanning reads), then prints one line per result for FileCheck."""
import json
import sys


def fail(msg):
    print("sarif-check: " + msg)
    sys.exit(1)


def need(obj, key, kind, where):
    if not isinstance(obj, dict) or key not in obj:
        fail(f"{where}: missing '{key}'")
    if not isinstance(obj[key], kind):
        fail(f"{where}.{key}: expected {kind.__name__}")
    return obj[key]


def check_physical(loc, where):
    art = need(loc, "artifactLocation", dict, where)
    uri = need(art, "uri", str, where + ".artifactLocation")
    if "uriBaseId" in art and not isinstance(art["uriBaseId"], str):
        fail(where + ": uriBaseId must be a string")
    region = need(loc, "region", dict, where)
    line = need(region, "startLine", int, where + ".region")
    if line < 1:
        fail(where + ": startLine must be >= 1")
    if "startColumn" in region and region["startColumn"] < 1:
        fail(where + ": startColumn must be >= 1")
    return uri, line, region.get("startColumn", 0)


def main():
    log = json.load(open(sys.argv[1]))
    if need(log, "version", str, "log") != "2.1.0":
        fail("version must be 2.1.0")
    runs = need(log, "runs", list, "log")
    if len(runs) != 1:
        fail("expected one run")
    run = runs[0]
    driver = need(need(run, "tool", dict, "run"), "driver", dict, "run.tool")
    need(driver, "name", str, "driver")
    rules = need(driver, "rules", list, "driver")
    rule_ids = [need(r, "id", str, "rule") for r in rules]
    for r in rules:
        need(need(r, "shortDescription", dict, "rule"), "text", str, "rule.shortDescription")
    bases = run.get("originalUriBaseIds", {})
    results = need(run, "results", list, "run")
    for i, res in enumerate(results):
        where = f"results[{i}]"
        text = need(need(res, "message", dict, where), "text", str, where + ".message")
        rule = need(res, "ruleId", str, where)
        if rule not in rule_ids:
            fail(where + ": ruleId not among the driver's rules")
        if "ruleIndex" in res and rule_ids[res["ruleIndex"]] != rule:
            fail(where + ": ruleIndex does not match ruleId")
        if res.get("level", "warning") not in ("none", "note", "warning", "error"):
            fail(where + ": bad level")
        locs = need(res, "locations", list, where)
        if not locs:
            fail(where + ": no location")
        uri, line, col = check_physical(need(locs[0], "physicalLocation", dict, where + ".locations[0]"),
                                        where + ".locations[0].physicalLocation")
        base = locs[0]["physicalLocation"]["artifactLocation"].get("uriBaseId")
        if base is not None and base not in bases:
            fail(where + ": uriBaseId not declared in originalUriBaseIds")
        related = res.get("relatedLocations", [])
        ids = set()
        for j, rel in enumerate(related):
            rwhere = f"{where}.relatedLocations[{j}]"
            need(need(rel, "message", dict, rwhere), "text", str, rwhere + ".message")
            check_physical(need(rel, "physicalLocation", dict, rwhere), rwhere + ".physicalLocation")
            rid = rel.get("id")
            if rid is not None:
                if rid in ids:
                    fail(rwhere + ": duplicate id")
                ids.add(rid)
        prints = need(res, "partialFingerprints", dict, where)
        if not prints or not all(isinstance(v, str) for v in prints.values()):
            fail(where + ": partialFingerprints must map names to strings")
        fp = ",".join(f"{k}={v}" for k, v in sorted(prints.items()))
        print(f"result {rule} {uri}:{line}:{col} related={len(related)} base={base} fp={fp}")
        print(f"  message {text}")
        for rel in related:
            r = rel["physicalLocation"]
            print(f"  related {r['artifactLocation']['uri']}:{r['region']['startLine']} {rel['message']['text']}")
    print(f"ok {len(results)} results")


main()
