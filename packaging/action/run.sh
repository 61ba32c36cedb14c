#!/usr/bin/env bash
# The action's last step (action.yml): runs mcp-conformance in the action's working-directory.
# The text report goes to the log, the markdown summary to $GITHUB_STEP_SUMMARY (also when
# checks fail), JUnit XML to MCPC_JUNIT; the harness's exit code is the step's.
set -uo pipefail

summary_dir="$RUNNER_TEMP/mcp-conformance"
mkdir -p "$summary_dir"
junit=${MCPC_JUNIT:-$summary_dir/junit.xml}
case $junit in
  /*) ;;
  *) junit="$(pwd)/$junit" ;;
esac
mkdir -p "$(dirname "$junit")"
markdown=$(mktemp "$summary_dir/summary.XXXXXX.md")

# `command` and `args` are split as bash splits a `run:` line: quotes group words, $VARS expand.
eval "args=($MCPC_ARGS)" || { echo "::error title=mcp-conformance action::cannot split 'args': $MCPC_ARGS"; exit 2; }
flags=(--junit "$junit" --markdown "$markdown")
[ -n "$MCPC_BASELINE" ] && flags+=(--expected-failures "$MCPC_BASELINE")
[ -n "$MCPC_CHECK_SET" ] && flags+=(--check-set "$MCPC_CHECK_SET")
if [ -n "$MCPC_URL" ]; then
  cmd=("$MCPC_BIN/mcp-conformance" --url "$MCPC_URL" "${flags[@]}" "${args[@]}")
else
  eval "server=($MCPC_COMMAND)" || { echo "::error title=mcp-conformance action::cannot split 'command': $MCPC_COMMAND"; exit 2; }
  cmd=("$MCPC_BIN/mcp-conformance" "${flags[@]}" "${args[@]}" -- "${server[@]}")
fi

printf 'Running:'
printf ' %q' "${cmd[@]}"
printf '\n'
"${cmd[@]}"
rc=$?

# The harness writes the summary whenever it ran (also when the server could not start); a
# usage error or an interrupted run leaves none, so the summary says where to look instead.
if [ -s "$markdown" ]; then
  cat "$markdown" >> "$GITHUB_STEP_SUMMARY"
else
  case $rc in
    2) why="usage error" ;;
    3) why="the server could not be started" ;;
    130 | 143) why="interrupted" ;;
    *) why="no summary was written" ;;
  esac
  printf '## mcp-conformance: exit %s\n\n%s: see the step'"'"'s log.\n' "$rc" "$why" >> "$GITHUB_STEP_SUMMARY"
fi
echo "exit-code=$rc" >> "$GITHUB_OUTPUT"
echo "junit=$junit" >> "$GITHUB_OUTPUT"
case $rc in
  0) ;;
  1) echo "::error title=mcp-conformance::a check failed (exit 1): see the report above and the job summary" ;;
  2) echo "::error title=mcp-conformance::usage error (exit 2): see the message above" ;;
  3) echo "::error title=mcp-conformance::the server could not be started (exit 3): see the message above" ;;
  *) echo "::error title=mcp-conformance::mcp-conformance exited $rc" ;;
esac
exit "$rc"
