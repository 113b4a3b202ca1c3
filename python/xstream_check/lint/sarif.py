"""SARIF 2.1.0 output of the Python front end, laid out as xstream-lint's
(clang-plugin/lint/sarif.cpp): the same rules, paths relative to a source
root, fingerprints from a finding's identity (function, buffer, streams) so
that they do not change when lines move."""
import hashlib
import json
import os
from urllib.parse import quote

from .report import (RULE_FREE_BEFORE_WAIT, RULE_PENDING_AT_RETURN, RULE_UNORDERED_FREE, RULE_USE_BEFORE_READY,
                     RULE_WRITE_AFTER_READ)

RULES = [
    (RULE_FREE_BEFORE_WAIT, "FreeBeforeWait",
     "Buffer freed before its allocation stream waits for another stream's use",
     "The buffer is freed on its stream before that stream waits on the event that follows the last use on "
     "another stream. Work allocated on the freeing stream in between can reuse the memory while the other "
     "stream still reads or writes it. Move the wait before the free."),
    (RULE_UNORDERED_FREE, "UnorderedFree",
     "Buffer freed while another stream may still use it",
     "The buffer is used by work on another stream and then freed on its stream with nothing ordering the "
     "freeing stream after that use. Record an event on the using stream after the last use and make the "
     "freeing stream wait on it before the free (or keep a reference and wait later, synchronize the host, "
     "or free on the using stream)."),
    (RULE_USE_BEFORE_READY, "UseBeforeReady",
     "Tensor used on one stream before another stream's write of it is ordered before the use",
     "The tensor is written by work on one stream (an operator's output, a non_blocking copy, an in-place "
     "operator) and then used by work on another stream with nothing making the using stream wait for the "
     "write. The use may read the old bytes. Make the using stream wait for the writing stream "
     "(wait_stream, or wait_event on an event recorded after the write) before the use."),
    (RULE_WRITE_AFTER_READ, "WriteAfterRead",
     "Tensor written on one stream while another stream may still be using it",
     "The tensor is used by work on another stream and then written on this stream with nothing ordering "
     "this stream after that use. The other stream may read the new bytes. Record an event on the using "
     "stream after its use and make the writing stream wait on it before the write."),
    (RULE_PENDING_AT_RETURN, "PendingAtReturn",
     "Tensor left to the caller with a use still pending on another stream",
     "The function uses a tensor it did not make (or one it stored where it outlives the call) on a stream "
     "it names itself, and returns with nothing ordering the tensor's allocation stream after that use and "
     "no record_stream of the using stream. Whoever frees the tensor later frees it on its allocation "
     "stream while the use may still run, and the caching allocator may hand the memory out again. Call "
     "record_stream(using stream) after the use, or make the allocation stream wait for the using stream "
     "before returning, or keep an event recorded after the use with the tensor."),
]
# The driver's fingerprints are xxh3 (LLVM's); the standard library has none,
# so this front end's fingerprints have a name of their own.
FINGERPRINT = "xstreamPythonFindingHash/v1"


def _uri(path):
    return quote(path, safe="/-_.~:")


def _artifact(path, root):
    path = os.path.abspath(path)
    if root and path.startswith(root + os.sep):
        return {"uri": _uri(path[len(root) + 1:]), "uriBaseId": "%SRCROOT%"}
    return {"uri": "file://" + _uri(path)}


def _physical(path, line, col, root):
    region = {"startLine": line}
    if col:
        region["startColumn"] = col
    return {"artifactLocation": _artifact(path, root), "region": region}


def render(findings, version, root):
    root = os.path.abspath(root).rstrip(os.sep) if root else ""
    rules, index = [], {}
    for rid, name, short, full in RULES:
        index[rid] = len(rules)
        rules.append({"id": rid, "name": name, "shortDescription": {"text": short},
                      "fullDescription": {"text": full}, "defaultConfiguration": {"level": "warning"},
                      "properties": {"tags": ["correctness", "cuda", "concurrency"]}})
    results, occurrences = [], {}
    for f in findings:
        result = {"ruleId": f.rule, "ruleIndex": index[f.rule], "level": "warning",
                  "message": {"text": f.message},
                  "locations": [{"physicalLocation": _physical(f.path, f.line, f.col, root)}]}
        if f.notes:
            result["relatedLocations"] = [
                {"id": i, "physicalLocation": _physical(n.path, n.line, n.col, root), "message": {"text": n.message}}
                for i, n in enumerate(f.notes)]
        rel = os.path.abspath(f.path)
        if root and rel.startswith(root + os.sep):
            rel = rel[len(root) + 1:]
        identity = "|".join((f.rule, rel, f.identity))
        occurrences[identity] = n = occurrences.get(identity, 0) + 1
        digest = hashlib.blake2b(identity.encode(), digest_size=8).hexdigest().upper()
        result["partialFingerprints"] = {FINGERPRINT: "%s:%d" % (digest, n)}
        results.append(result)
    run = {"tool": {"driver": {"name": "xstream-lint", "version": version, "semanticVersion": version,
                               "rules": rules}}}
    if root:
        run["originalUriBaseIds"] = {"%SRCROOT%": {"uri": "file://" + _uri(root) + "/"}}
    run["results"] = results
    log = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2) + "\n"
