#!/usr/bin/env bash
# Builds the cargo-fuzz targets with nightly and runs each for a given time.
#
#   fuzz/run.sh TARGET|all SECONDS [extra libFuzzer flags...]
#
# Targets: codec parse server_dispatch client_replies. Each run starts from fuzz/corpus/TARGET,
# seeded from the committed fuzz/seeds/TARGET, and grows it; crashes, hangs (-timeout) and
# out-of-memory inputs (-rss_limit_mb) land in fuzz/artifacts/TARGET/. The full libFuzzer log is
# fuzz/logs/TARGET.log; one summary line per target is printed and appended to
# fuzz/logs/summary.md (a Markdown table row, ready to paste into docs/robustness.md).
#
# Environment: SANITIZER (none|address, default none: the workspace forbids unsafe code, so
# ASan mostly costs speed), RSS_MB (default 2048), NICE (default 10).
# Exit status: 0 if no target found anything, 1 otherwise.
set -euo pipefail

cd "$(dirname "$0")"
ALL=(codec parse server_dispatch client_replies)
if [[ $# -lt 2 ]]; then
    echo "usage: $0 TARGET|all SECONDS [libFuzzer flags...]" >&2
    echo "targets: ${ALL[*]}" >&2
    exit 2
fi
WHICH=$1
SECONDS_EACH=$2
shift 2
if [[ $WHICH == all ]]; then
    TARGETS=("${ALL[@]}")
else
    TARGETS=("$WHICH")
fi
SANITIZER=${SANITIZER:-none}
RSS_MB=${RSS_MB:-2048}
NICE=${NICE:-10}
TRIPLE=$(rustc +nightly -vV | sed -n 's/^host: //p')
BIN_DIR=target/$TRIPLE/release

# Per-target libFuzzer flags: input size caps that let each target reach its limits, the
# JSON/MCP dictionary, and a per-input timeout that turns a hang into an artifact.
flags_for() {
    case $1 in
        codec) echo "-max_len=16384 -timeout=20" ;;
        parse) echo "-max_len=4096 -timeout=10 -dict=dicts/mcp.dict" ;;
        server_dispatch) echo "-max_len=8192 -timeout=30 -dict=dicts/mcp.dict" ;;
        client_replies) echo "-max_len=4096 -timeout=30" ;;
        *) echo "unknown target $1" >&2; exit 2 ;;
    esac
}

for t in "${TARGETS[@]}"; do
    flags_for "$t" >/dev/null
done

echo "building ${TARGETS[*]} (sanitizer: $SANITIZER)..." >&2
if [[ ${#TARGETS[@]} -eq 1 ]]; then
    nice -n "$NICE" cargo +nightly fuzz build -s "$SANITIZER" "${TARGETS[0]}" >&2
else
    nice -n "$NICE" cargo +nightly fuzz build -s "$SANITIZER" >&2
fi

mkdir -p logs
status=0
for t in "${TARGETS[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t"
    cp -n "seeds/$t"/* "corpus/$t/" 2>/dev/null || true
    before=$(ls "artifacts/$t" | wc -l)
    log=logs/$t.log
    echo "running $t for ${SECONDS_EACH}s (log: fuzz/$log)..." >&2
    set +e
    # shellcheck disable=SC2046
    nice -n "$NICE" "$BIN_DIR/$t" "corpus/$t" \
        -artifact_prefix="artifacts/$t/" \
        -max_total_time="$SECONDS_EACH" \
        -rss_limit_mb="$RSS_MB" \
        -print_final_stats=1 \
        $(flags_for "$t") "$@" >"$log" 2>&1
    rc=$?
    set -e
    # The last status line ("#N DONE cov: C ft: F corp: K/S ...", or the last "#N ..." line
    # before a crash) and the final stats.
    last=$(grep -E '^#[0-9]+' "$log" | grep -E ' cov: ' | tail -n 1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -n 1)
    corpus=$(ls "corpus/$t" | wc -l)
    corpus_kb=$(du -sk --apparent-size "corpus/$t" | cut -f1)
    after=$(ls "artifacts/$t" | wc -l)
    found=$((after - before))
    if [[ $found -ne 0 ]]; then
        status=1
        outcome="**$found new artifact(s)** in fuzz/artifacts/$t/ (see fuzz/$log)"
    elif [[ $rc -ne 0 ]]; then
        status=1
        outcome="**libFuzzer exited with $rc** (see fuzz/$log)"
    else
        outcome="0 crashes"
    fi
    line="| $t | ${SECONDS_EACH} s | ${execs:-?} execs (${rate:-?}/s) | cov ${cov:-?} | ft ${ft:-?} | corpus ${corpus} (${corpus_kb} KiB) | peak RSS ${rss:-?} MB | $outcome |"
    echo "$line"
    echo "$line" >>logs/summary.md
done
exit $status
