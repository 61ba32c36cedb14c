#!/usr/bin/env bash
# Soak: 1 000 000 echo calls through ONE release mcp-echo-server process, pipelined with a
# bounded window, every reply checked (each id answered exactly once, its text echoed back in
# content and structuredContent), the server's VmRSS sampled every calls/20 calls, then EOF and
# a clean exit (status 0, nothing logged at warn or error).
#
# The driver is the #[ignore]d test `soak_one_million_calls` in server/tests/load.rs, built in
# release so that the client is not the bottleneck. It prints calls, time, calls/s, the RSS
# samples, RSS at start / after warm-up (a tenth of the calls) / end, the max, the peak (VmHWM)
# and the growth after warm-up; it fails if a reply is lost, duplicated or wrong, if the peak
# passes 64 MiB or if RSS grows by 8 MiB or more after warm-up.
#
# Usage: scripts/soak.sh [CALLS] [WINDOW]      (defaults 1000000 and 64)
# The output is also saved to target/soak/soak-<UTC time>.log.
set -euo pipefail

cd "$(dirname "$0")/.."
calls="${1:-1000000}"
window="${2:-64}"
log_dir=target/soak
mkdir -p "$log_dir"
log="$log_dir/soak-$(date -u +%Y%m%dT%H%M%SZ).log"

echo "soak: building the release server and driver (cargo test --release --no-run)" >&2
nice -n 10 cargo test --release -p mcp-echo-server --test load --no-run 2>&1 | tail -n 3 >&2

{
  echo "soak: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm), $(nproc) CPUs, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "soak: command: SOAK_CALLS=$calls SOAK_WINDOW=$window cargo test --release -p mcp-echo-server --test load -- --ignored --nocapture soak_one_million_calls"
  SOAK_CALLS="$calls" SOAK_WINDOW="$window" nice -n 10 cargo test --release -q -p mcp-echo-server \
    --test load -- --ignored --nocapture --exact soak_one_million_calls 2>&1
} | tee "$log"
status=${PIPESTATUS[0]}
echo "soak: log saved to $log" >&2
exit "$status"
