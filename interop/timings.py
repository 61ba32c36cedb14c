"""Records how long mcp-conformance took against each real server of the interop suite, from
the `durationMs` of the JSON reports in a results folder, into interop/timings.json: as
"before" (an earlier harness, run with INTEROP_HARNESS=BIN interop/run.sh --times-before LABEL)
or "after" (this one, on `interop/run.sh --update`). docs/interop.md shows both; a plain run
(CI) changes neither, so the page stays the same from run to run.

Usage: python timings.py before|after LABEL RESULTS_DIR"""

import json
import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
which, label, results = sys.argv[1], sys.argv[2], Path(sys.argv[3])
path = HERE / "timings.json"
timings = json.loads(path.read_text()) if path.exists() else {}
seconds = {}
for report in sorted(results.glob("harness-*.json")):
    try:
        target = json.loads(report.read_text())["targets"][0]
    except (ValueError, KeyError, IndexError):
        continue
    seconds[report.stem.removeprefix("harness-")] = round(target["durationMs"] / 1000, 1)
timings[which] = {
    "harness": label,
    "options": "--timeout 3 --jobs 2",
    "machine": f"{platform.machine()}, {len(__import__('os').sched_getaffinity(0))} CPUs",
    "seconds": seconds,
}
if which == "after":
    # The whole `mcp-conformance client` run of each judged client (every scenario).
    clients = {}
    for report in sorted(results.glob("judged-*.json")):
        try:
            target = json.loads(report.read_text())["targets"][0]
        except (ValueError, KeyError, IndexError):
            continue
        clients[report.stem.removeprefix("judged-")] = round(target["durationMs"] / 1000, 1)
    timings["clients"] = clients
path.write_text(json.dumps(timings, indent=2, sort_keys=True) + "\n")
print(f"recorded {which} ({label}) for {len(seconds)} servers in {path}")
