#!/usr/bin/env bash
# The A/B of the server's speed machinery: each piece against its absence, interleaved, over
# pipes and over a socketpair (what Node-based hosts give their servers), unpinned and on
# pinned pairs (--pin same: server and driver on one CPU; --pin split: a CPU each).
#
#   bench/ab.sh [--rounds R] [--calls N] [--variants DIR] [--current PATH] [--out FILE]
#
# The pieces, as they stood at BASE (below): the blocking stdio loop (plain blocking read(2)
# and write(2) on the main thread, stopped by SIGURG), the write pacing (getrusage after each
# write: hold replies while the client shares the CPU), and the exec split (the HTTP stack in
# a second executable that --http execs, to keep it out of the stdio binary). The measurement
# build is BASE with bench/ab/speed-ab.patch, which adds what the comparison needs and nothing
# else: sockets read on the reactor by the async loop too (MSG_DONTWAIT, as pipes already
# were), MCP_ECHO_AB_LOOP=async (the async loop on pipes and sockets), MCP_ECHO_AB_PACING=off
# (write every 2 KiB, no getrusage), and feature ab-linked (the HTTP stack linked into the
# stdio binary). Unless --variants DIR holds them already (mcp-echo-server,
# mcp-echo-server-http, mcp-echo-server-linked, mcp-bench), they are built in a temporary
# worktree. Each invocation is one fresh server process measured at 64 B and 16 KiB, windows 1
# and 64; rounds rotate the order. Today's server (--current, default target/release/
# mcp-echo-server: build it with bench/setup.sh) runs beside them, so each piece is also judged
# against what ships. bench/summarize_ab.py writes the medians and the verdicts into FILE
# (default BENCHMARKS.md) between its markers. Run on a quiet machine.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")

# The last commit with all three pieces in place.
BASE=b87ebca
rounds=5
calls=50000
variants=""
current="${CARGO_TARGET_DIR:-$root/target}/release/mcp-echo-server"
out="$root/BENCHMARKS.md"
orig_args=("$@")
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    --current) current=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ab.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [ -z "$variants" ]; then
  variants=$(mktemp -d)
  tree=$(mktemp -d)
  trap 'git -C "$root" worktree remove --force "$tree" >/dev/null 2>&1; rm -rf "$tree"' EXIT
  echo "== building the measurement variants (BASE $BASE + bench/ab/speed-ab.patch) in $tree"
  git -C "$root" worktree add --detach "$tree" "$BASE" >/dev/null || exit 2
  git -C "$tree" apply "$here/ab/speed-ab.patch" || exit 2
  (cd "$tree" && export CARGO_TARGET_DIR="$tree/target" \
    && cargo build --quiet --release --locked -p mcp-bench \
    && cargo build --quiet --release --locked -p mcp-echo-server \
    && cp target/release/mcp-echo-server target/release/mcp-echo-server-http target/release/mcp-bench "$variants/" \
    && cargo build --quiet --release --locked -p mcp-echo-server --features ab-linked \
    && cp target/release/mcp-echo-server "$variants/mcp-echo-server-linked") || exit 2
fi
bench="$variants/mcp-bench"
split="$variants/mcp-echo-server"
linked="$variants/mcp-echo-server-linked"
for f in "$bench" "$split" "$variants/mcp-echo-server-http" "$linked" "$current"; do
  [ -x "$f" ] || { echo "ab.sh: $f missing" >&2; exit 2; }
done

stamp=$(date -u +%Y%m%dT%H%M%SZ)
dir="$here/results/ab-$stamp"
mkdir -p "$dir"
common=(--runs 1 --format json --payload 64,16384 --window 1,64 --timeout 120 --calls "$calls")

# One configuration per line: SERVER STDIO PLACEMENT. SERVER: blocking (the loop the base
# binary picks on pipes and sockets), async (MCP_ECHO_AB_LOOP=async), async-nopace (and
# MCP_ECHO_AB_PACING=off), linked (async, with the HTTP stack linked in), current (today's
# server), floor (mcp-bench --floor). PLACEMENT: free (unpinned), same, split.
configs=()
for stdio in pipes socket; do
  for place in free same split; do
    for server in blocking async async-nopace current floor; do
      configs+=("$server $stdio $place")
    done
  done
  configs+=("linked $stdio free")
done

# Prints the command line of one configuration (env first).
invocation_of() {
  local server=$1 stdio=$2 place=$3 pin=() env=() program=("$split")
  [ "$place" = free ] || pin=(--pin "$place")
  case "$server" in
    async) env=(MCP_ECHO_AB_LOOP=async) ;;
    async-nopace) env=(MCP_ECHO_AB_LOOP=async MCP_ECHO_AB_PACING=off) ;;
    linked) env=(MCP_ECHO_AB_LOOP=async); program=("$linked") ;;
    current) program=("$current") ;;
    floor) program=() ;;
  esac
  if [ "$server" = floor ]; then
    echo env "$bench" "${common[@]}" --stdio "$stdio" "${pin[@]}" --floor
  else
    echo env "${env[@]}" "$bench" "${common[@]}" --stdio "$stdio" "${pin[@]}" -- "${program[@]}"
  fi
}

manifest="$dir/manifest.jsonl"
: > "$manifest"
# shellcheck source=bench/invocation.sh
. "$here/invocation.sh"
start=$(date +%s)
cut -d" " -f1-3 /proc/loadavg > "$dir/loadavg-start" 2>/dev/null || true
n=${#configs[@]}
for r in $(seq 1 "$rounds"); do
  for i in $(seq 0 $((n - 1))); do
    read -r server stdio place <<<"${configs[$(( (i + r - 1) % n ))]}"
    # shellcheck disable=SC2207  # the paths here have no spaces
    cmd=($(invocation_of "$server" "$stdio" "$place"))
    bench_one "$server-$stdio-$place" "$r" "$rounds" "$dir" "$manifest" "${cmd[@]}"
  done
done
cut -d" " -f1-3 /proc/loadavg > "$dir/loadavg-end" 2>/dev/null || true
echo "total $(( $(date +%s) - start ))s; raw results in ${dir#"$root"/}"
stat -c '%n %s' "$split" "$linked" "$variants/mcp-echo-server-http" > "$dir/sizes"
echo "current $(stat -c %s "$current")" >> "$dir/sizes"

invocation="bench/ab.sh${orig_args[*]:+ ${orig_args[*]}}"
python3 "$here/summarize_ab.py" --results "$dir" --out "$out" --invocation "$invocation" \
  --rounds "$rounds" --calls "$calls" --base "$BASE"
