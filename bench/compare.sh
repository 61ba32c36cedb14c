#!/usr/bin/env bash
# Peer comparison: ours (both framings), rmcp stdio() and stdio_pipes(), the TypeScript SDK,
# the Python SDK and the floor (mcp-bench --floor, and --floor-reply structured:
# the floor sending our reply, the text twice; and in Content-Length framing), and ours and the floor once more over a
# socketpair (--stdio socket, as Node-based hosts connect servers), and ours and the floor pinned
# beside the bench's driver (--pin same) and on a CPU of their own (--pin split), so each pair is
# measured in one placement; all run INTERLEAVED for R rounds
# (A B C, B C A, ...: each round starts one server further on), each invocation one fresh run
# (--runs 1 --format json) with payloads 64 and 16384 B and windows 1 and 64. Raw JSON goes to bench/results/<stamp>/;
# bench/summarize.py takes medians across rounds and writes its section of BENCHMARKS.md
# (between marker comments; the rest of the file, e.g. notes on optimisations, is kept).
#
#   bench/compare.sh [--rounds R] [--calls N] [--py-calls N] [--timeout SECS] [--out FILE] [--bench PATH]
#                    [--ours PATH] [--servers NAME,...]
#
# Defaults: 3 rounds, 50000 calls; the Python SDK gets N/10 calls (it is ~100x slower, and the
# full count would take most of the time budget). Run bench/setup.sh first. --ours benches
# another build of mcp-echo-server (say, one built without Streamable HTTP, to compare its
# stdio start time and peak RSS with this one's); --servers runs a subset (e.g.
# ours-ndjson,floor). Binaries are looked for in $CARGO_TARGET_DIR/release (default
# target/release). The HTTP comparison is bench/compare_http.sh.
# A nonzero exit of one invocation (the Python SDK drops requests pending at EOF, so bench
# exits 1 for it) is recorded and the comparison goes on.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
interop="$root/interop"

rounds=3
calls=50000
py_calls=""
out="$root/BENCHMARKS.md"
target="${CARGO_TARGET_DIR:-$root/target}"
bench="$target/release/mcp-bench"
ours="$target/release/mcp-echo-server"
wanted=""
timeout_s=120
orig_args=("$@")
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --py-calls) py_calls=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    --ours) ours=$2; shift 2 ;;
    --servers) wanted=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$py_calls" ] || py_calls=$(( calls / 10 > 0 ? calls / 10 : 1 ))

rmcp="$interop/servers/rmcp-echo/target/release/rmcp-echo"
node="$interop/node_modules/.bin/node"
py="$interop/.venv/bin/python"
for f in "$bench" "$ours" "$rmcp" "$node" "$py"; do
  [ -x "$f" ] || { echo "compare.sh: $f missing; run bench/setup.sh" >&2; exit 2; }
done

stamp=$(date -u +%Y%m%dT%H%M%SZ)
dir="$here/results/$stamp"
mkdir -p "$dir"
common=(--runs 1 --format json --payload 64,16384 --window 1,64 --timeout "$timeout_s")

# name | calls | bench args (before and after --), one server per line, in run order.
servers=(ours-ndjson ours-content-length rmcp-stdio rmcp-pipes ts-sdk python-sdk floor floor-structured floor-content-length ours-socket floor-socket ours-same floor-same ours-split floor-split)
if [ -n "$wanted" ]; then
  all=("${servers[@]}")
  servers=()
  for s in "${all[@]}"; do
    case ",$wanted," in *",$s,"*) servers+=("$s") ;; esac
  done
  [ ${#servers[@]} -gt 0 ] || { echo "compare.sh: --servers names none of: ${all[*]}" >&2; exit 2; }
fi
args_for() {
  case "$1" in
    ours-ndjson)         echo "--framing ndjson --calls $calls -- $ours" ;;
    ours-content-length) echo "--framing content-length --calls $calls -- $ours" ;;
    rmcp-stdio)          echo "--framing ndjson --calls $calls -- $rmcp --transport stdio" ;;
    rmcp-pipes)          echo "--framing ndjson --calls $calls -- $rmcp --transport pipes" ;;
    ts-sdk)              echo "--framing ndjson --calls $calls -- $node $here/servers/ts_echo_server.mjs" ;;
    python-sdk)          echo "--framing ndjson --calls $py_calls -- $py $interop/servers/py_echo_server.py" ;;
    floor)               echo "--floor --calls $calls" ;;
    floor-structured)    echo "--floor --floor-reply structured --calls $calls" ;;
    # The floor in Content-Length framing: what that framing costs the driver and the pipes.
    floor-content-length) echo "--floor --framing content-length --calls $calls" ;;
    # Over a socketpair, as Node-based hosts (Claude Code, Cursor) connect their servers.
    ours-socket)         echo "--stdio socket --framing ndjson --calls $calls -- $ours" ;;
    floor-socket)        echo "--floor --stdio socket --calls $calls" ;;
    # Placement fixed, so ours and the floor are compared in the same one (on one CPU, split
    # exits 2 and its rows say "no data").
    ours-same)           echo "--pin same --framing ndjson --calls $calls -- $ours" ;;
    floor-same)          echo "--pin same --floor --calls $calls" ;;
    ours-split)          echo "--pin split --framing ndjson --calls $calls -- $ours" ;;
    floor-split)         echo "--pin split --floor --calls $calls" ;;
  esac
}

# The manifest: one JSON line per invocation (server, round, exit code, files, command).
manifest="$dir/manifest.jsonl"
: > "$manifest"
# shellcheck source=bench/invocation.sh
. "$here/invocation.sh"

start=$(date +%s)
cut -d" " -f1-3 /proc/loadavg > "$dir/loadavg-start" 2>/dev/null || true
n=${#servers[@]}
for r in $(seq 1 "$rounds"); do
  # Each round starts one server further on (A B C, B C A, ...): no server is always first.
  for i in $(seq 0 $((n - 1))); do
    s=${servers[$(( (i + r - 1) % n ))]}
    # shellcheck disable=SC2206  # the paths here have no spaces
    a=($(args_for "$s"))
    cmd=("$bench" "${common[@]}" "${a[@]}")
    bench_one "$s" "$r" "$rounds" "$dir" "$manifest" "${cmd[@]}"
  done
done
cut -d" " -f1-3 /proc/loadavg > "$dir/loadavg-end" 2>/dev/null || true
echo "total $(( $(date +%s) - start ))s; raw results in ${dir#"$root"/}"

invocation="bench/compare.sh${orig_args[*]:+ ${orig_args[*]}}"
python3 "$here/summarize.py" --results "$dir" --out "$out" --invocation "$invocation" \
  --rounds "$rounds" --calls "$calls" --py-calls "$py_calls" --root "$root"
