"""Writes docs/interop.md from the interop suite's results (interop/results/): real clients
against mcp-echo-server (stdio and Streamable HTTP), the official suite over HTTP, and mcp-conformance against
real servers. Only statuses go in (no timings), so the page changes exactly when a result does.

Usage: python report.py RESULTS_DIR > docs/interop.md"""

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = Path(sys.argv[1])

# name: (what it is, package and pinned version)
LOCK = json.loads((HERE / "package-lock.json").read_text())["packages"]


def npm(pkg):
    return f"`{pkg}` {LOCK[f'node_modules/{pkg}']['version']}"


def pypi(pkg, requirements="requirements.txt"):
    for line in (HERE / requirements).read_text().splitlines():
        if line.lower().startswith(f"{pkg}=="):
            return f"`{pkg}` {line.split('==')[1]} (PyPI)"
    return f"`{pkg}`"


def crate(pkg):
    lock = (HERE / "servers/rmcp-echo/Cargo.lock").read_text()
    m = re.search(rf'name = "{pkg}"\nversion = "([^"]+)"', lock)
    if not m:  # installed by run.sh with `cargo install --locked PKG@VERSION`
        m = re.search(rf"{pkg}@([0-9.]+)", (HERE / "run.sh").read_text())
    return f"`{pkg}` {m.group(1) if m else '?'} (crates.io)"


# name: (what it is and the SDK it is built on, language, package and pinned version)
SERVERS = {
    "everything": ("server-everything, TypeScript SDK 1.x", "TypeScript", npm("@modelcontextprotocol/server-everything")),
    "filesystem": ("server-filesystem, TypeScript SDK 1.x", "TypeScript", npm("@modelcontextprotocol/server-filesystem")),
    "memory": ("server-memory, TypeScript SDK 1.x", "TypeScript", npm("@modelcontextprotocol/server-memory")),
    "sequential-thinking": ("server-sequential-thinking, TypeScript SDK 1.x", "TypeScript", npm("@modelcontextprotocol/server-sequential-thinking")),
    "playwright": ("Playwright MCP (headless, isolated, no browser installed), TypeScript SDK 1.x", "TypeScript", npm("@playwright/mcp")),
    "fastmcp-ts": ("FastMCP for TypeScript, an example (`interop/servers/fastmcp_ts_server.mjs`)", "TypeScript", npm("fastmcp")),
    "context7": ("Context7 (its tools, which reach the network, are not called), TypeScript SDK 2.x", "TypeScript", npm("@upstash/context7-mcp")),
    "mongodb": ("MongoDB MCP server (telemetry off, no connection string), TypeScript SDK 2.x", "TypeScript", npm("mongodb-mcp-server")),
    "ts-sdk2": ("TypeScript SDK 2.x, an example (`interop/servers/ts_sdk2_server.mjs`)", "TypeScript", npm("@modelcontextprotocol/server")),
    "tmcp": ("tmcp, an example (`interop/servers/tmcp_server.mjs`)", "TypeScript", npm("tmcp")),
    "python": ("Python SDK 2.x, an echo server (`interop/servers/py_echo_server.py`)", "Python", pypi("mcp")),
    "fastmcp-py": ("FastMCP for Python, an example (`interop/servers/fastmcp_py_server.py`)", "Python", pypi("fastmcp")),
    "py-sdk1": ("Python SDK 1.x, an example (`interop/servers/py_sdk1_server.py`)", "Python", pypi("mcp", "requirements-mcp1.txt")),
    "fetch": ("mcp-server-fetch, Python SDK 2.x", "Python", pypi("mcp-server-fetch")),
    "git": ("mcp-server-git, Python SDK 2.x", "Python", pypi("mcp-server-git")),
    "time": ("mcp-server-time, Python SDK 2.x", "Python", pypi("mcp-server-time")),
    "kubernetes": ("kubernetes-mcp-server (a kubeconfig that points nowhere), Go SDK", "Go", npm("kubernetes-mcp-server-linux-amd64")),
    "grafana": ("mcp-grafana (no Grafana running), Go SDK", "Go", pypi("mcp-grafana")),
    "mcp-cron": ("mcp-cron (in-memory database), Go SDK", "Go", npm("mcp-cron-linux-amd64")),
    "mcp-time": ("mcp-time, mcp-go", "Go", npm("mcp-time-linux-x64")),
    "rmcp": ("rmcp (the Rust SDK), an echo server (`interop/servers/rmcp-echo`)", "Rust", crate("rmcp")),
    "rust-mcp-filesystem": ("rust-mcp-filesystem, rust-mcp-sdk", "Rust", crate("rust-mcp-filesystem")),
    "everything-http": ("server-everything over Streamable HTTP (`streamableHttp`), TypeScript SDK 1.x", "TypeScript", npm("@modelcontextprotocol/server-everything")),
    "python-http": ("Python SDK 2.x over Streamable HTTP, the echo server above (`--http PORT`)", "Python", pypi("mcp")),
    "rmcp-http": ("rmcp over Streamable HTTP (`StreamableHttpService`), the echo server above (`--transport http`)", "Rust", crate("rmcp")),
}
TIMINGS = json.loads((HERE / "timings.json").read_text()) if (HERE / "timings.json").exists() else {}
STABILITY = json.loads((HERE / "stability.json").read_text()) if (HERE / "stability.json").exists() else {}
# One letter a status in the matrix below.
LETTER = {"PASS": "P", "FAIL": "F", "WARN": "W", "INFO": "I", "SKIP": "S", "BLOCKED": "B", "N/A": "N"}


def load(path):
    return json.loads(path.read_text())


def baseline(name):
    reasons = {}
    path = HERE / "baselines" / f"{name}.txt"
    if path.exists():
        for line in path.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                key, _, reason = line.partition(" ")
                reasons[key.split(":")[-1]] = reason.strip()
    return reasons


out = []
w = out.append
w("# Interop results")
w("")
w("Generated by `interop/run.sh --update` (`interop/report.py`) from the JSON the clients and")
w("`mcp-conformance --format json` write; do not edit by hand. CI runs the suite and fails when")
w("this page would change, so every row here is what the pinned versions do today.")
w("")

w("## Real clients × `mcp-echo-server`")
w("")
w("| client | version | framing | result | steps |")
w("|---|---|---|---|---|")
for name in ["ts", "python", "inspector", "ts2", "python-modern", "ts-http", "python-http", "inspector-http"]:
    r = load(RESULTS / f"client-{name}.json")
    steps = ", ".join(("✓ " if s["ok"] else "✗ ") + s["name"] for s in r["steps"])
    w(f"| {r['client']} | {r['version']} | {r['framing']} | {'works' if r['ok'] else '**fails**'} | {steps} |")
w("")
w("Each client connects, lists tools, calls `echo` with ASCII, unicode (with a newline and")
w("U+2028) and a 1 MiB text and checks the exact result, checks that invalid arguments come back")
w("as `isError`, pings, and closes; the close must end the server through stdin EOF alone (exit")
w("status 0, no SIGTERM). The TypeScript SDK 2.x client with `versionNegotiation: auto` and the")
w("Python SDK's `Client` (mode `auto`) probe `server/discover` and must end up in the modern era")
w("(2026-07-28); the 2.x client is also run with `legacy`. These clients speak newline-delimited")
w("JSON only (the spec's stdio framing), so `Content-Length` framing is exercised by")
w("`mcp-conformance` and our own tests. The rows with framing `http` run the same steps against")
w("`mcp-echo-server --http` (Streamable HTTP): the TypeScript client also ends its session with")
w("`DELETE` and checks that the ended session then gets 404, and the Python SDK's `Client` (mode")
w("`auto`) must reach the stateless 2026-07-28 era over HTTP too.")
w("")

def rmcp_client_version():
    lock = (HERE / "judged/rmcp-client/Cargo.lock").read_text()
    m = re.search(r'name = "rmcp"\nversion = "([^"]+)"', lock)
    return f"`rmcp` {m.group(1) if m else '?'} (crates.io)"


# name: (the client, package and pinned version)
JUDGED = {
    "mcp-client": ("our `mcp-client` (`client/examples/conformance_client.rs`)", "this workspace"),
    "ts-sdk1": ("TypeScript SDK 1.x `Client` (`interop/judged/ts1.mjs`)", npm("@modelcontextprotocol/sdk")),
    "ts-sdk2": ("TypeScript SDK 2.x `Client`, versionNegotiation auto (`interop/judged/ts2.mjs`)", npm("@modelcontextprotocol/client")),
    "py-session": ("Python SDK `ClientSession` (`interop/judged/py_session.py`)", pypi("mcp")),
    "py-client": ("Python SDK high-level `Client`, mode auto (`interop/judged/py_client.py`)", pypi("mcp")),
    "rmcp": ("rmcp (the Rust SDK) default client (`interop/judged/rmcp-client`)", rmcp_client_version()),
    "inspector": ("MCP Inspector CLI (`interop/judged/inspector.sh`)", npm("@modelcontextprotocol/inspector")),
}


def run_time(name):
    """Recorded by `interop/run.sh --update` (timings.json), so a plain run leaves the page as it is."""
    secs = TIMINGS.get("clients", {}).get(name)
    return "–" if secs is None else f"{secs:.1f} s"


def client_eras(t):
    """The eras the client spoke: legacy if it sent initialize, modern if a request carried
    2026-07-28 _meta (client.modern-meta judged it)."""
    status = {c["id"]: c["status"] for c in t["checks"]}
    eras = []
    if status.get("client.initialize-first") in ("PASS", "FAIL"):
        eras.append("legacy")
    if status.get("client.modern-meta") in ("PASS", "FAIL"):
        eras.append("2026-07-28")
    return ", ".join(eras) or "–"


w("## Real clients judged by `mcp-conformance client`")
w("")
w("Each client is run by `mcp-conformance client` once per scenario, with the server as its last")
w("argument (over stdio a relay executable it spawns, over HTTP the URL of the harness's scripted")
w("server): it connects, declares what it supports, lists tools, calls `add_numbers` (2 s")
w("timeout, where the client lets one be set), and closes. The counts are verdicts of the client")
w("checks (docs/checks.md); F counts the failures its baseline explains (listed below), W the")
w("SHOULDs it does not meet. The run time is the whole `client` run, every scenario, as")
w(f"`interop/run.sh --update` measured it on {TIMINGS.get('after', {}).get('machine', 'this machine')}.")
w("")
w("| client | version | transport | eras | P | F | W | I | S | N/A | run time |")
w("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
judged_fails = []
for name, (what, pkg) in JUDGED.items():
    for transport, suffix in (("stdio", ""), ("http", "-http")):
        path = RESULTS / f"judged-{name}{suffix}.json"
        if not path.exists():
            continue
        t = load(path)["targets"][0]
        s = t["summary"]
        w(f"| {what} | {pkg} | {transport} | {client_eras(t)} | {s['pass']} | {s['fail'] + s['expectedFail']} | "
          f"{s['warn']} | {s['info']} | {s['skip']} | {s.get('notApplicable', 0)} | {run_time(name + suffix)} |")
        reasons = baseline(f"client-{name}{suffix}")
        for c in t["checks"]:
            if c["status"] in ("FAIL", "WARN"):
                judged_fails.append(f"- {name} ({transport}): {c['status']} `{c['id']}`: "
                                    f"{reasons.get(c['id'], c['actual'])}")
w("")
w("rmcp over stdio is judged without `client.stdio-shutdown`: when a connection fails (the")
w("`modern` scenario) it kills the server it spawned while its own process exits, and which")
w("comes first varies from run to run (SIGKILL with stdin still open in some runs, a clean")
w("EOF in others).")
w("")
if judged_fails:
    w("What they get wrong (from each client's baseline, or the check's finding for a WARN):")
    w("")
    out.extend(judged_fails)
    w("")

OBSERVED = {
    "ts-echo": ("TypeScript SDK 1.x client (`clients/ts_client.mjs`)", "`mcp-echo-server`", None),
    "py-echo": ("Python SDK client (`clients/py_client.py`)", "`mcp-echo-server`", None),
    "ts-everything": ("TypeScript SDK 1.x client (`judged/ts1.mjs`)", "server-everything", "ts-sdk1"),
    "py-everything": ("Python SDK `ClientSession` (`judged/py_session.py`)", "server-everything", "py-session"),
}
JUDGED_STATUSES = ("PASS", "FAIL", "WARN")
w("## `mcp-conformance observe` in front of real servers")
w("")
w("Each client drives a real server through two observers in a row: the outer one sees the")
w("traffic as the client and server made it, the inner one sees it after the outer forwarded")
w("it. Identical means both transcripts hold the same messages, byte for byte, in the same")
w("order; the clients against `mcp-echo-server` also check every result they get (the rows")
w("above). Agrees with `client`: of the client checks both the observer and `mcp-conformance")
w("client` (stdio) judged to a verdict for the same client, how many got the same verdict.")
w("")
w("| client | server | messages | identical | P | F | W | agrees with `client` |")
w("|---|---|---:|---|---:|---:|---:|---|")
for name, (client, server, judged) in OBSERVED.items():
    path = RESULTS / f"observed-{name}.json"
    if not path.exists():
        continue
    r = load(path)
    s = r["summary"]
    agree = "–"
    jpath = RESULTS / f"judged-{judged}.json" if judged else None
    if jpath and jpath.exists():
        cm = {c["id"]: c["status"] for c in load(jpath)["targets"][0]["checks"]}
        both = [k for k, v in r["verdicts"].items()
                if k.startswith("client.") and v in JUDGED_STATUSES and cm.get(k) in JUDGED_STATUSES]
        same = [k for k in both if r["verdicts"][k] == cm[k]]
        differ = [f"`{k}` {r['verdicts'][k]} / {cm[k]}" for k in both if r["verdicts"][k] != cm[k]]
        agree = f"{len(same)} of {len(both)}" + (f" (differ: {', '.join(differ)})" if differ else "")
    w(f"| {client} | {server} | {r['messages']} | {'yes' if r['identical'] else '**no**'} | "
      f"{s['pass']} | {s['fail']} | {s['warn']} | {agree} |")
w("")

w("## Official conformance suite (HTTP) × `mcp-echo-server --http`")
w("")
w(f"{npm('@modelcontextprotocol/conformance')} against `mcp-echo-server --http`, natively (no bridge).")
w("Failures that need features an echo server does not have are listed, with reasons, in")
w("`interop/baselines/official-conformance.yml`.")
w("")
w("| scenario | result |")
w("|---|---|")
summary = (RESULTS / "official.txt").read_text()
summary = summary[summary.find("=== SUMMARY ===") :]
for m in re.finditer(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed", summary, re.M):
    mark, scenario = m.group(1), m.group(2)
    w(f"| `{scenario}` | {'pass' if mark == '✓' else 'expected failure (baseline)'} |")
w("")

w("## The official suite beside the harness, on server-everything over HTTP")
w("")
w("The official suite's server scenarios that any server can be judged by, and the two that")
w("need the suite's own test server (its prompt, tool and resource names), run against")
w("`mcp-server-everything streamableHttp`; beside each, the harness's checks that judge the same")
w("thing on the same server (the `everything-http` run below). Where they disagree, the last")
w("column says who is right and why.")
w("")
# scenario -> (our checks that judge the same thing, why the verdicts differ where they do)
SIDE = {
    "server-initialize": (["lifecycle.initialize-result"], ""),
    "ping": (["lifecycle.ping"], ""),
    "logging-set-level": (
        ["logging.set-level", "logging.invalid-level"],
        "the scenario sets a valid level and passes on any result; the harness reports what that "
        "gets (INFO: the page lets clients send it, no sentence binds the server to accept it) "
        "and also sends an invalid level, whose -32602 is the page's SHOULD",
    ),
    "tools-list": (["tools.list-shape", "tools.names-valid", "tools.schemas-valid"], ""),
    "resources-list": (["resources.list-shape", "resources.read-shape"], ""),
    "prompts-list": (["prompts.list-shape", "prompts.get-result"], ""),
    "completion-complete": (
        ["completions.complete-shape"],
        "the scenario completes the suite's own prompt `test_prompt_with_arguments`, which this "
        "server does not have (-32602 \"not found\"); the harness completes an argument of a prompt "
        "the server lists, and a template variable",
    ),
    "resources-templates-read": (
        ["resources.templates-list-shape", "resources.templates-rfc6570", "resources.read-shape"],
        "the scenario reads the suite's own `test://template/123/data`, which this server does not "
        "have; the harness lists the server's templates and checks them as RFC 6570",
    ),
}
ours = {c["id"]: c for c in load(RESULTS / "harness-everything-http.json")["targets"][0]["checks"]}
w("| official scenario | its verdict | the harness's checks | their verdicts | agree? |")
w("|---|---|---|---|---|")
for scenario, (ids_, why) in SIDE.items():
    path = RESULTS / f"official-everything-{scenario}.json"
    checks = json.loads(path.read_text()) if path.exists() else []
    statuses = sorted({c["status"] for c in checks}) or ["did not run"]
    official = "pass" if statuses == ["SUCCESS"] else ", ".join(s.lower() for s in statuses)
    mine = [(i, ours[i]["status"]) for i in ids_ if i in ours]
    verdicts = ", ".join(f"{st}" for _, st in mine) or "–"
    good = all(st in ("PASS", "INFO") for _, st in mine) and bool(mine)
    agree = "yes" if good == (official == "pass") else "no"
    agree += f": {why}" if why else ""
    names = ", ".join(f"`{i}`" for i, _ in mine) or "–"
    w(f"| `{scenario}` | {official} | {names} | {verdicts} | {agree} |")
w("")
w("## `mcp-conformance` × real servers")
w("")
w("Generic profile, newline-delimited framing (the `-http` rows: Streamable HTTP, `--url`),")
w("`--timeout 3 --jobs 2`. FAILs listed in")
w("`interop/baselines/<server>.txt` are expected (each with the spec text it breaks); anything")
w("else fails CI. `eras` is what `era.detect` found: `legacy` (answers `initialize`), `modern`")
w("(answers 2026-07-28 `server/discover`), or both; the `modern.*` checks run only against servers")
w("that speak modern. `starts` is how many server processes the run started (over HTTP: how")
w("many HTTP clients, each a session of its own, the run opened).")
w("")
runs = {
    "ours (ndjson)": load(RESULTS / "ours-ndjson.json"),
    "ours (content-length)": load(RESULTS / "ours-content-length.json"),
    "ours (http)": load(RESULTS / "ours-http.json"),
}
for name in SERVERS:
    runs[name] = load(RESULTS / f"harness-{name}.json")
w("| server | what | language | package | serverInfo | eras | result | starts |")
w("|---|---|---|---|---|---|---|---|")
for label, doc in runs.items():
    t = doc["targets"][0]
    info = t["serverInfo"] or {}
    s = t["summary"]
    what, language, pkg = SERVERS.get(label, (f"`mcp-echo-server`, {t['profile']} profile", "Rust", "this repository"))
    eras = " + ".join(t.get("eras") or []) or "none"
    w(f"| {label} | {what} | {language} | {pkg} | {info.get('name', '?')} {info.get('version', '?')} | {eras} | "
      f"{s['pass']} pass, {s['fail'] + s['expectedFail']} fail, {s['warn']} warn, {s['info']} info, "
      f"{s['skip']} skip, {s.get('notApplicable', 0)} n/a, {s['blocked']} blocked | {t['starts']['count']} |")
w("")
before, after = TIMINGS.get("before", {}), TIMINGS.get("after", {})
if before and after:
    w("### Run time")
    w("")
    w(f"Seconds per server, `--timeout 3 --jobs 2`, measured on {after['machine']}: after, by")
    w("`interop/run.sh --update` (this harness); before, by `INTEROP_HARNESS=BIN interop/run.sh")
    w(f"--times-before LABEL` with {before['harness']}, which started a process per check, gave")
    w("later starts only `--timeout`, and waited out `--timeout` wherever a reply did not come.")
    w("Both come from `interop/timings.json`. What remains of a run is server starts and the")
    w("waits that prove an absence, each a whole `--timeout`: no reply to a 2025-03-26 batch")
    w("(almost every server), no reply after input a client must not send, no exit after stdin")
    w("closes. Those checks start first, so `--jobs 2` overlaps two of them. The Go SDK servers")
    w("start in milliseconds, so these waits were already most of their time before and are")
    w("nearly all of it now: two or three `--timeout`s, hence less than 5× faster.")
    w("")
    w("| server | before (s) | after (s) | faster |")
    w("|---|---:|---:|---:|")
    total_b = total_a = 0.0
    for name in SERVERS:
        b, a = before["seconds"].get(name), after["seconds"].get(name)
        if b is None or a is None:
            continue
        total_b, total_a = total_b + b, total_a + a
        w(f"| {name} | {b:.1f} | {a:.1f} | {b / a:.1f}× |")
    w(f"| all {len(SERVERS)} | {total_b:.0f} | {total_a:.0f} | {total_b / total_a:.1f}× |")
    w("")
if STABILITY:
    w("### Verdicts do not depend on `--jobs` or load")
    w("")
    w(f"`interop/run.sh --stability` ran the harness against every server above three times on")
    w(f"{STABILITY['machine']}: `--timeout 3` with `--jobs 1`, with `--jobs 4`, and with `--jobs 2`")
    w("beside two busy loops competing for the CPUs; `interop/stability.json` records the result.")
    w("")
    w("| server | checks | verdicts that changed |")
    w("|---|---:|---|")
    for name, st in STABILITY["servers"].items():
        w(f"| {name} | {st['checks']} | {'; '.join(st['differ']) or 'none'} |")
    w("")
w("### Features: what each server declares, and how its checks went")
w("")
w("From each report's `coverage`: per capability the server declares in `initialize` (legacy")
w("era), the feature checks that ran to a verdict (P pass, F fail or warn, I info) and those that")
w("did not (S: skipped, blocked or not applicable, with the reasons in the report); – not")
w("declared. The 2026-07-28 era's row is in each report.")
w("")
CAPS = ["tools", "resources", "resources.subscribe", "prompts", "logging", "completions"]
w("| server | " + " | ".join(CAPS) + " |")
w("|---|" + "---|" * len(CAPS))
for label, doc in runs.items():
    t = doc["targets"][0]
    cov = {c["capability"]: c for c in t.get("coverage", []) if c["era"] == "legacy"}
    cells = []
    for cap in CAPS:
        c = cov.get(cap)
        if c is None or not c["declared"]:
            cells.append("–")
            continue
        parts = [f"{n}{k}" for n, k in ((c["passed"], "P"), (c["failed"], "F"), (c["info"], "I"), (c["notRun"], "S")) if n]
        cells.append(" ".join(parts) or "declared, no check")
    w(f"| {label} | " + " | ".join(cells) + " |")
w("")
ids = []
for doc in runs.values():
    for c in doc["targets"][0]["checks"]:
        if c["id"] not in ids:
            ids.append(c["id"])
cols = list(runs)
w("### Every check")
w("")
w("P pass, F fail, W warn (a SHOULD not met), I info, S skip (does not apply), B blocked, N not")
w("applicable on this transport (stdio-only checks over HTTP, `http.*` over stdio), – not run")
w("(the echo profile's own checks). Columns in the order of the table above.")
w("")
w("| check | level | " + " | ".join(str(i + 1) for i in range(len(cols))) + " |")
w("|---|---|" + "---|" * len(cols))
levels = {}
for doc in runs.values():
    for c in doc["targets"][0]["checks"]:
        levels[c["id"]] = c["level"]
for cid in ids:
    cells = []
    for doc in runs.values():
        c = next((c for c in doc["targets"][0]["checks"] if c["id"] == cid), None)
        cells.append("–" if c is None else LETTER[c["status"]])
    w(f"| `{cid}` | {levels[cid]} | " + " | ".join(cells) + " |")
w("")
w("Columns: " + ", ".join(f"{i + 1} {name}" for i, name in enumerate(cols)) + ".")
w("")

w("## Streamable HTTP")
w("")
w("Everything above that ran over Streamable HTTP, in one place: real clients and the official")
w("suite against `mcp-echo-server --http` (a fresh server on a free loopback port), and")
w("`mcp-conformance --url` against HTTP servers it starts itself. Over HTTP each message is a")
w("POST; the checks that only mean something on a byte stream (framing, stdin EOF, exit) are")
w("N/A, and the `http.*` checks judge statuses, sessions, SSE, `Origin` and the 2026-07-28")
w("mirrored headers.")
w("")
w("| peer | against | result |")
w("|---|---|---|")
for name in ["ts-http", "python-http", "inspector-http"]:
    r = load(RESULTS / f"client-{name}.json")
    w(f"| {r['client']} {r['version']} | `mcp-echo-server --http` | {'works' if r['ok'] else '**fails**'} |")
passed = len(re.findall(r"^✓ ", summary, re.M))
w(f"| {npm('@modelcontextprotocol/conformance')} | `mcp-echo-server --http` | {passed} scenarios pass, the rest need features an echo server does not have |")
for label, doc in runs.items():
    if not (label.endswith("-http") or label == "ours (http)"):
        continue
    t = doc["targets"][0]
    s = t["summary"]
    http_fails = [c["id"] for c in t["checks"] if c["status"] == "FAIL" and c["id"].startswith("http.")]
    w(f"| `mcp-conformance --url` | {label} | {s['pass']} pass, {s['fail'] + s['expectedFail']} fail"
      f"{' (' + ', '.join(f'`{i}`' for i in http_fails) + ')' if http_fails else ''} |")
w("")

w("## What each real server gets wrong")
w("")
for name, (what, _, pkg) in SERVERS.items():
    t = runs[name]["targets"][0]
    reasons = baseline(name)
    fails = [c for c in t["checks"] if c["status"] == "FAIL"]
    warns = [c for c in t["checks"] if c["status"] == "WARN"]
    w(f"**{name}**: {what} ({pkg})")
    w("")
    if not fails and not warns:
        w("- Nothing: every check passes.")
    for c in fails:
        w(f"- FAIL `{c['id']}`: {reasons.get(c['id'], c['description'])}")
    for c in warns:
        w(f"- WARN `{c['id']}`: does not do what this SHOULD asks: {c['description']}.")
    w("")

w((HERE / "disagreements.md").read_text().rstrip())
w("")
w((HERE / "changes.md").read_text().rstrip())
print("\n".join(out))
