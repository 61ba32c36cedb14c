"""One line per `mcp-conformance` report of the interop suite (a server the harness judged, or a
client `mcp-conformance client` judged), then what needs a look: new failures, stale baseline
entries, a start error.

Usage: python summary.py REPORT_JSON LABEL EXIT_CODE BASELINE_FILE"""

import json
import sys

path, label, rc, baseline = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
t = json.load(open(path))["targets"][0]
s = t["summary"]
version = (t.get("serverInfo") or {}).get("version")
starts = t.get("starts", {}).get("count")
print(f"{'PASS' if rc == 0 else 'FAIL'} {label}{f' ({version})' if version else ''}: "
      f"{s['pass']} pass, {s['fail']} fail, {s['expectedFail']} expected fail, {s['warn']} warn, "
      f"{s['info']} info, {s['skip']} skip, {s['blocked']} blocked; "
      + (f"{starts} starts, " if starts else "") + f"{t['durationMs'] / 1000:.1f}s")
for c in t["checks"]:
    if c["status"] == "FAIL" and not c["expectedFailure"]:
        print(f"  new failure: {c['id']}: {c['actual']}")
for stale in t["staleExpectedFailures"]:
    print(f"  now passes (remove it from {baseline}): {stale}")
if t["startError"]:
    print(f"  could not start: {t['startError']}")
