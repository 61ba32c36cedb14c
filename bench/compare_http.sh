#!/usr/bin/env bash
# Streamable HTTP comparison: ours (mcp-echo-server --http), rmcp's StreamableHttpService
# (interop/servers/rmcp-echo --transport http), the TypeScript SDK's
# StreamableHTTPServerTransport (bench/servers/ts_http_echo_server.mjs) and the bench's HTTP
# floors (mcp-bench --url URL --floor, plain and --floor-reply structured), run INTERLEAVED for
# R rounds (A B C, B C A, ...: each round starts one server further on), each invocation one
# fresh server process on a free loopback port, benched with `mcp-bench --url` (--runs 1
# --format json) at payloads 64 B and 16 KiB and 1 and 64 concurrent requests. Raw JSON goes
# to bench/results/<stamp>-http/; bench/summarize_http.py takes medians across rounds and writes
# its own section of BENCHMARKS.md (between its marker comments; the rest is kept).
#
#   bench/compare_http.sh [--rounds R] [--calls N] [--payload B[,B]] [--servers LIST]
#                         [--timeout SECS] [--out FILE] [--bench PATH] [--ours PATH]
#                         [--baseline PATH]
#
# Defaults: 3 rounds, 20000 calls, payloads 64,16384, servers
# ours,rmcp,ts,floor,floor-structured. --servers picks a subset in that order (e.g. ours,floor);
# --ours another build of mcp-echo-server; --baseline PATH adds an earlier build of it as one
# more server, interleaved with the rest, and a table of ours ÷ that build (a change's cost or
# gain, measured in the same rounds). A server that fails (or ours built without --http)
# is recorded and the comparison goes on. Binaries are looked for in
# $CARGO_TARGET_DIR/release (default target/release).
# Run bench/setup.sh first.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
interop="$root/interop"

rounds=3
calls=20000
payload=64,16384
wanted=ours,rmcp,ts,floor,floor-structured
out="$root/BENCHMARKS.md"
target="${CARGO_TARGET_DIR:-$root/target}"
bench="$target/release/mcp-bench"
ours="$target/release/mcp-echo-server"
baseline=""
timeout_s=60
orig_args=("$@")
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --payload) payload=$2; shift 2 ;;
    --servers) wanted=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    --ours) ours=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare_http.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -z "$baseline" ] || wanted="$wanted,baseline"

rmcp="$interop/servers/rmcp-echo/target/release/rmcp-echo"
node="$interop/node_modules/.bin/node"
servers=()
all=(ours rmcp ts floor floor-structured baseline)
for s in "${all[@]}"; do
  case ",$wanted," in *",$s,"*) servers+=("http-$s") ;; esac
done
[ ${#servers[@]} -gt 0 ] || { echo "compare_http.sh: --servers names none of ${all[*]}" >&2; exit 2; }
need=("$bench")
for s in "${servers[@]}"; do
  case "$s" in
    http-ours) need+=("$ours") ;;
    http-baseline) need+=("$baseline") ;;
    http-rmcp) need+=("$rmcp") ;;
    http-ts) need+=("$node") ;;
    http-floor*) ;;  # the bench itself
  esac
done
for f in "${need[@]}"; do
  [ -x "$f" ] || { echo "compare_http.sh: $f missing; run bench/setup.sh" >&2; exit 2; }
done

stamp=$(date -u +%Y%m%dT%H%M%SZ)
dir="$here/results/$stamp-http"
mkdir -p "$dir"
common=(--runs 1 --format json --payload "$payload" --concurrency 1,64 --calls "$calls" --timeout "$timeout_s")

# A loopback port free right now (the server binds it a moment later).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# What follows the common options for one invocation, listening on port $2: the floor's options,
# or `--` and the server command.
server_args() {
  case "$1" in
    http-ours) echo "-- $ours --http 127.0.0.1:$2" ;;
    http-baseline) echo "-- $baseline --http 127.0.0.1:$2" ;;
    http-rmcp) echo "-- $rmcp --transport http --addr 127.0.0.1:$2" ;;
    http-ts)   echo "-- $node $here/servers/ts_http_echo_server.mjs $2" ;;
    http-floor) echo "--floor" ;;
    http-floor-structured) echo "--floor --floor-reply structured" ;;
  esac
}

manifest="$dir/manifest.jsonl"
: > "$manifest"
# shellcheck source=bench/invocation.sh
. "$here/invocation.sh"

start=$(date +%s)
cut -d" " -f1-3 /proc/loadavg > "$dir/loadavg-start" 2>/dev/null || true
n=${#servers[@]}
for r in $(seq 1 "$rounds"); do
  for i in $(seq 0 $((n - 1))); do
    s=${servers[$(( (i + r - 1) % n ))]}
    port=$(free_port)
    # shellcheck disable=SC2206  # the paths here have no spaces
    server=($(server_args "$s" "$port"))
    cmd=("$bench" --url "http://127.0.0.1:$port/mcp" "${common[@]}" "${server[@]}")
    bench_one "$s" "$r" "$rounds" "$dir" "$manifest" "${cmd[@]}"
  done
done
cut -d" " -f1-3 /proc/loadavg > "$dir/loadavg-end" 2>/dev/null || true
echo "total $(( $(date +%s) - start ))s; raw results in ${dir#"$root"/}"

invocation="bench/compare_http.sh${orig_args[*]:+ ${orig_args[*]}}"
python3 "$here/summarize_http.py" --results "$dir" --out "$out" --invocation "$invocation" \
  --rounds "$rounds" --calls "$calls" --root "$root" --bench "$bench" --ours "$ours"
