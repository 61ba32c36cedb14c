"""Compares the verdicts of the three harness runs `interop/run.sh --stability` makes against
every real server (--jobs 1, --jobs 4, and --jobs 2 with two busy loops on the CPUs) and
records in interop/stability.json, per server, whether every check got the same status in all
three, and which did not. docs/interop.md shows it.

Usage: python stability.py RESULTS_DIR"""

import json
import os
import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
results = Path(sys.argv[1])
MODES = ["jobs-1", "jobs-4", "loaded"]
servers = {}
for report in sorted((results / MODES[0]).glob("harness-*.json")):
    name = report.stem.removeprefix("harness-")
    verdicts = {}
    for mode in MODES:
        try:
            target = json.loads((results / mode / report.name).read_text())["targets"][0]
        except (OSError, ValueError, KeyError, IndexError) as e:
            verdicts[mode] = {"(no report)": str(e)}
            continue
        verdicts[mode] = {c["id"]: c["status"] for c in target["checks"]}
        if target["startError"]:
            verdicts[mode]["(start)"] = target["startError"]
    ids = sorted(set().union(*verdicts.values()))
    differ = [
        f"{i}: " + ", ".join(f"{m} {verdicts[m].get(i, '-')}" for m in MODES)
        for i in ids
        if len({verdicts[m].get(i) for m in MODES}) > 1
    ]
    servers[name] = {"checks": len(ids), "differ": differ}
path = HERE / "stability.json"
path.write_text(
    json.dumps(
        {
            "machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} CPUs",
            "runs": "--timeout 3, with --jobs 1; --jobs 4; --jobs 2 beside two busy loops",
            "servers": servers,
        },
        indent=2,
        sort_keys=True,
    )
    + "\n"
)
changed = {n: s["differ"] for n, s in servers.items() if s["differ"]}
print(f"{len(servers)} servers, {len(changed)} with a verdict that changed; wrote {path}")
for name, lines in changed.items():
    for line in lines:
        print(f"  {name}: {line}")
