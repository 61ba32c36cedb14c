#!/usr/bin/env bash
# What `mcp-conformance observe` adds to a session: mcp-bench against mcp-echo-server directly and
# through the observer (`mcp-conformance observe --quiet --report FILE -- mcp-echo-server`, the
# judge and the report on), over stdio, and over Streamable HTTP (`--listen`/`--upstream` in
# front of `mcp-echo-server --http`), run INTERLEAVED for R rounds (direct, observed, observed,
# direct, ...), each invocation fresh processes, `--runs 1 --format json`. Raw JSON goes to
# bench/results/<stamp>-observe/; bench/summarize_observe.py takes medians across rounds and
# writes its own section of BENCHMARKS.md (between its marker comments).
#
#   bench/observe.sh [--rounds R] [--calls N] [--out FILE]
#
# Defaults: 5 rounds, 5000 calls (sequential: window 1; pipelined: window 64; HTTP: concurrency
# 1). Binaries come from $CARGO_TARGET_DIR/release (default target/release): build them with
# `cargo build --release -p mcp-conformance -p mcp-echo-server -p mcp-bench`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
rounds=5
calls=5000
out="$root/BENCHMARKS.md"
orig_args=("$@")
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "observe.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
target="${CARGO_TARGET_DIR:-$root/target}/release"
for b in mcp-bench mcp-conformance mcp-echo-server; do
  [ -x "$target/$b" ] || { echo "observe.sh: $target/$b missing: cargo build --release -p $b" >&2; exit 2; }
done
bench=$target/mcp-bench harness=$target/mcp-conformance server=$target/mcp-echo-server
dir="$here/results/$(date -u +%Y%m%dT%H%M%SZ)-observe"
mkdir -p "$dir"
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

stdio() { # label, round
  local cmd=("$server")
  [ "$1" = observed ] && cmd=("$harness" observe --quiet --report "$dir/report-$2.json" -- "$server")
  "$bench" --runs 1 --format json --calls "$calls" --window 1,64 -- "${cmd[@]}" > "$dir/stdio-$1-$2.json"
}

http() { # label, round
  local port up pid=""
  port=$(free_port)
  "$server" --http "127.0.0.1:$port" 2>/dev/null &
  local server_pid=$!
  local url="http://127.0.0.1:$port/mcp"
  if [ "$1" = observed ]; then
    up=$url
    port=$(free_port)
    "$harness" observe --quiet --listen "127.0.0.1:$port" --upstream "$up" 2>/dev/null &
    pid=$!
    url="http://127.0.0.1:$port/mcp"
  fi
  python3 - "$url" <<'PY'
import socket, sys, time, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
for _ in range(200):
    try:
        socket.create_connection((u.hostname, u.port), 0.2).close()
        break
    except OSError:
        time.sleep(0.05)
PY
  "$bench" --url "$url" --runs 1 --format json --calls "$calls" --concurrency 1 > "$dir/http-$1-$2.json"
  [ -n "$pid" ] && { kill -TERM "$pid"; wait "$pid"; } 2>/dev/null
  kill -TERM "$server_pid" 2>/dev/null
  wait "$server_pid" 2>/dev/null
}

for r in $(seq 1 "$rounds"); do
  order=(direct observed)
  [ $((r % 2)) -eq 0 ] && order=(observed direct)
  for label in "${order[@]}"; do
    stdio "$label" "$r" || echo "observe.sh: stdio $label round $r failed" >&2
    http "$label" "$r" || echo "observe.sh: http $label round $r failed" >&2
  done
done
python3 "$here/summarize_observe.py" --results "$dir" --out "$out" --rounds "$rounds" --calls "$calls" \
  --invocation "bench/observe.sh${orig_args[*]:+ ${orig_args[*]}}"
