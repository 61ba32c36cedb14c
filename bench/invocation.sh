# Sourced by compare.sh and compare_http.sh: one benched invocation of an interleaved round.
#
#   bench_one SERVER ROUND ROUNDS DIR MANIFEST COMMAND...
#
# runs COMMAND (stdin closed) with stdout to DIR/rROUND-SERVER.json and stderr beside it
# (.err), prints one line (with the end of stderr when it failed) and appends the run's record
# to MANIFEST, which the summarizers read.

json_str() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }

bench_one() {
  local s=$1 r=$2 rounds=$3 dir=$4 manifest=$5
  shift 5
  local base="$dir/r$r-$s" t0 t1 rc secs
  t0=$(date +%s.%N)
  "$@" > "$base.json" 2> "$base.err" < /dev/null
  rc=$?
  t1=$(date +%s.%N)
  secs=$(python3 -c "print(round($t1 - $t0, 1))")
  printf 'round %s/%s  %-20s exit %s  %6ss\n' "$r" "$rounds" "$s" "$rc" "$secs"
  if [ "$rc" -ne 0 ]; then sed 's/^/    stderr: /' "$base.err" | tail -3; fi
  printf '{"server":"%s","round":%s,"exit":%s,"seconds":%s,"json":"%s","stderr":"%s","command":%s}\n' \
    "$s" "$r" "$rc" "$secs" "$(basename "$base.json")" "$(basename "$base.err")" \
    "$(json_str "$*")" >> "$manifest"
}
