#!/usr/bin/env bash
# Memcheck (valgrind) over
#   1. every test binary of the protocol crate (mcp-protocol: unit tests, tests/codec.rs,
#      tests/props.rs), and
#   2. a short soak of the RELEASE mcp-echo-server: initialize, CALLS tools/call echo requests
#      (default 20 000) and a few bad inputs piped in through real pipes, then EOF; and the same
#      input from a regular file into a regular file (read and written on tokio's blocking
#      threads; pipes and sockets are read and written on the reactor).
# Each run uses --leak-check=full with definite and possible leaks counted as errors, and
# --error-exitcode=1; scripts/valgrind.supp suppresses one false positive in Rust's std (see
# there). The script fails unless every run exits 0 with "ERROR SUMMARY: 0 errors", the server
# exits 0, and every request got exactly one right reply.
#
# Usage: scripts/valgrind.sh [CALLS]
# Logs: target/valgrind/ (one valgrind log per run, the soak's input and replies, summary.txt).
set -euo pipefail

cd "$(dirname "$0")/.."
calls="${1:-20000}"
out=target/valgrind
mkdir -p "$out"
summary="$out/summary.txt"
: >"$summary"
vg=(valgrind --error-exitcode=1 --leak-check=full
    --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible
    --suppressions=scripts/valgrind.supp)
failed=0

note() { echo "$*" | tee -a "$summary"; }

# Prints the figures of one valgrind log: errors, definitely/possibly lost, all freed or not.
figures() {
  local log=$1
  local errors definite possible suppressed inuse
  errors=$(grep -Eo 'ERROR SUMMARY: [0-9,]+ errors' "$log" | tail -1 | grep -Eo '[0-9,]+' | head -1)
  definite=$(grep -Eo 'definitely lost: [0-9,]+ bytes in [0-9,]+ blocks' "$log" | tail -1 || true)
  possible=$(grep -Eo 'possibly lost: [0-9,]+ bytes in [0-9,]+ blocks' "$log" | tail -1 || true)
  suppressed=$(grep -Eo 'suppressed: [0-9,]+ bytes in [0-9,]+ blocks' "$log" | tail -1 || true)
  inuse=$(grep -Eo 'in use at exit: [0-9,]+ bytes in [0-9,]+ blocks' "$log" | tail -1 || true)
  if grep -q 'All heap blocks were freed' "$log"; then inuse="all heap blocks freed"; fi
  echo "ERROR SUMMARY ${errors:-?} errors; ${definite:-definitely lost: 0 bytes}; ${possible:-possibly lost: 0 bytes}; leak ${suppressed:-suppressed: 0 bytes}; ${inuse}"
}

note "valgrind: $(valgrind --version) on $(uname -srm), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

# ---- 1. The protocol crate's test binaries ---------------------------------------------------
note "== mcp-protocol test binaries under memcheck"
if ! nice -n 10 cargo test -p mcp-protocol --no-run --message-format=json >"$out/protocol-build.json" \
     2>"$out/protocol-build.stderr"; then
  note "FAILED: cargo test -p mcp-protocol --no-run (see $out/protocol-build.stderr)"
  exit 1
fi
mapfile -t bins < <(python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"] + " " + m["executable"])
' <"$out/protocol-build.json")
if [ "${#bins[@]}" -eq 0 ]; then
  note "FAILED: no test binaries found for mcp-protocol"
  exit 1
fi
for entry in "${bins[@]}"; do
  name=${entry%% *}
  bin=${entry#* }
  log="$out/protocol-$name.vg.log"
  start=$(date +%s.%N)
  status=0
  nice -n 10 "${vg[@]}" --log-file="$log" "$bin" -q >"$out/protocol-$name.out" 2>&1 || status=$?
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  result=$(grep -E '^test result:' "$out/protocol-$name.out" | tail -1 || echo "no test result")
  note "$(printf '%-14s exit %d in %.0f s: %s\n    %s' "$name" "$status" "$secs" "$result" "$(figures "$log")")"
  if [ "$status" -ne 0 ]; then failed=1; fi
done

# ---- 2. A short soak of the release server -----------------------------------------------------
note "== release mcp-echo-server under memcheck: $calls echo calls (and bad inputs), then EOF"
nice -n 10 cargo build --release -q -p mcp-echo-server
server=target/release/mcp-echo-server
python3 - "$calls" >"$out/soak-input.ndjson" <<'PY'
import json, sys
calls = int(sys.argv[1])
w = sys.stdout.write
w(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "valgrind-soak", "version": "1"}}}) + "\n")
w('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
for i in range(1, calls + 1):
    w(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                  "params": {"name": "echo", "arguments": {"text": "call %d \u2713 \u00e9cho" % i}}},
                 ensure_ascii=False) + "\n")
    if i % 5000 == 0:
        # Error paths too: an unknown method, an unknown tool, bad JSON, a notification.
        w('{"jsonrpc":"2.0","id":"m%d","method":"no/such/method"}\n' % i)
        w('{"jsonrpc":"2.0","id":"t%d","method":"tools/call","params":{"name":"nope","arguments":{}}}\n' % i)
        w('{"jsonrpc":"2.0","id":"j%d",\n' % i)
        w('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999999999}}\n')
PY
# One run of the server under memcheck: `pipe` (stdin and stdout are pipes, as many MCP hosts
# make them: read and written on the reactor) or `file` (a regular file in and out: tokio's
# blocking stdin/stdout).
soak_server() {
  local mode=$1
  local log="$out/server-soak-$mode.vg.log"
  local replies="$out/soak-replies-$mode.ndjson"
  local start status secs check
  start=$(date +%s.%N)
  set +e
  if [ "$mode" = pipe ]; then
    cat "$out/soak-input.ndjson" |
      nice -n 10 "${vg[@]}" --log-file="$log" "$server" --log-level warn 2>"$out/server-soak-$mode.stderr" |
      cat >"$replies"
    status=${PIPESTATUS[1]}
  else
    nice -n 10 "${vg[@]}" --log-file="$log" "$server" --log-level warn <"$out/soak-input.ndjson" \
      >"$replies" 2>"$out/server-soak-$mode.stderr"
    status=$?
  fi
  set -e
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  check=$(python3 - "$calls" "$replies" <<'PY'
import json, sys
calls, path = int(sys.argv[1]), sys.argv[2]
seen, problems, extra = {}, [], 0
for n, line in enumerate(open(path, encoding="utf-8")):
    v = json.loads(line)
    i = v.get("id")
    seen[i] = seen.get(i, 0) + 1
    if isinstance(i, int) and i >= 1:
        want = "call %d \u2713 \u00e9cho" % i
        r = v.get("result", {})
        if r.get("content", [{}])[0].get("text") != want or r.get("structuredContent", {}).get("text") != want:
            problems.append("wrong reply to %d: %s" % (i, line.strip()))
    elif isinstance(i, str) and i[0] in "mt":
        if "error" not in v and not v.get("result", {}).get("isError"):
            problems.append("no error for %s: %s" % (i, line.strip()))
    elif i is None or i == 0:
        pass
    else:
        extra += 1
missing = [i for i in range(0, calls + 1) if seen.get(i) != 1]
bad = calls // 5000
if missing:
    problems.append("%d ids not answered exactly once, the first %s" % (len(missing), missing[:5]))
if seen.get(None, 0) != bad:
    problems.append("%d replies with a null id for %d bad JSON lines" % (seen.get(None, 0), bad))
if extra:
    problems.append("%d replies to ids never sent" % extra)
print("%d replies: ids 0..%d each answered once with the right text, %d error replies" %
      (sum(seen.values()), calls, 3 * bad) if not problems else "PROBLEMS: " + "; ".join(problems[:5]))
PY
  )
  note "$(printf 'server (%s) exit %d in %.0f s: %s\n    %s' "$mode" "$status" "$secs" "$check" "$(figures "$log")")"
  if [ -s "$out/server-soak-$mode.stderr" ]; then
    note "    server stderr: $(wc -l <"$out/server-soak-$mode.stderr") lines (one WARN per bad JSON line expected), the first: $(head -n 1 "$out/server-soak-$mode.stderr" | cut -c 1-160)"
  fi
  if [ "$status" -ne 0 ] || [[ "$check" == PROBLEMS* ]]; then failed=1; fi
}
soak_server pipe
soak_server file

if [ "$failed" -ne 0 ]; then
  note "valgrind: FAILED (logs in $out/)"
  exit 1
fi
note "valgrind: all clean (logs in $out/)"
