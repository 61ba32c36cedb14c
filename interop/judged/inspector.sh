#!/usr/bin/env bash
# The MCP Inspector CLI, as `mcp-conformance client` runs it: the last argument is the server (a
# relay executable over stdio, a URL over HTTP). It lists tools, then (if that worked) calls
# add_numbers, each a session of its own (that is how the CLI works).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
target=${!#}
inspector() { "$here/node_modules/.bin/node" "$here/node_modules/.bin/inspector" --cli "$@"; }
case "$target" in
  http*) t=("$target" --transport http) ;;
  *) t=("$target") ;;
esac
# A person would not call a tool after the listing failed.
inspector "${t[@]}" --method tools/list >/dev/null &&
  inspector "${t[@]}" --method tools/call --tool-name add_numbers --tool-arg a=1 --tool-arg b=2 >/dev/null
exit 0
