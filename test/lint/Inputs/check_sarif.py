"""Checks a SARIF log for the fields SARIF 2.1.0 requires (and that GitHub
code scanning reads), then prints one line per result and per tool execution
notification for FileCheck."""
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


def check_notifications(run, driver, bases):
    """Checks the invocation and its tool execution notifications (compile
    errors that left code unanalyzed) and prints them; None without any."""
    if "invocations" not in run:
        return None
    invocations = need(run, "invocations", list, "run")
    if len(invocations) != 1:
        fail("expected one invocation")
    inv = invocations[0]
    ok = need(inv, "executionSuccessful", bool, "invocation")
    descriptors = [need(d, "id", str, "notification descriptor") for d in driver.get("notifications", [])]
    notes = inv.get("toolExecutionNotifications", [])
    for i, n in enumerate(notes):
        where = f"toolExecutionNotifications[{i}]"
        text = need(need(n, "message", dict, where), "text", str, where + ".message")
        desc = need(n, "descriptor", dict, where)
        nid = need(desc, "id", str, where + ".descriptor")
        if nid not in descriptors:
            fail(where + ": descriptor id not among the driver's notifications")
        if "index" in desc and descriptors[desc["index"]] != nid:
            fail(where + ": descriptor index does not match its id")
        level = n.get("level", "warning")
        if level not in ("none", "note", "warning", "error"):
            fail(where + ": bad level")
        locs = n.get("locations", [])
        first = "-"
        for j, loc in enumerate(locs):
            lwhere = f"{where}.locations[{j}]"
            phys = need(loc, "physicalLocation", dict, lwhere)
            uri, line, col = check_physical(phys, lwhere + ".physicalLocation")
            base = phys["artifactLocation"].get("uriBaseId")
            if base is not None and base not in bases:
                fail(lwhere + ": uriBaseId not declared in originalUriBaseIds")
            if j == 0:
                first = f"{uri}:{line}:{col}"
        print(f"notification {nid} {level} {first}")
        print(f"  message {text}")
        for loc in locs[1:]:
            p = loc["physicalLocation"]
            msg = loc.get("message", {}).get("text", "")
            print(f"  location {p['artifactLocation']['uri']}:{p['region']['startLine']}:"
                  f"{p['region'].get('startColumn', 0)} {msg}")
    return len(notes), ok


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
    notifications = check_notifications(run, driver, bases)
    if notifications is None:
        print(f"ok {len(results)} results")
    else:
        print(f"ok {len(results)} results, {notifications[0]} notifications, "
              f"executionSuccessful={str(notifications[1]).lower()}")


main()
