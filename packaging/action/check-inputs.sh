#!/usr/bin/env bash
# The action's first step (action.yml): refuses bad inputs before anything is installed.
# Inputs arrive as MCPC_* environment variables; runs in the action's working-directory.
set -euo pipefail

fail() {
  echo "::error title=mcp-conformance action::$1"
  exit 2
}

if [ -n "$MCPC_COMMAND" ] && [ -n "$MCPC_URL" ]; then
  fail "give either 'command' (a stdio server) or 'url' (a Streamable HTTP endpoint), not both"
fi
if [ -z "$MCPC_COMMAND" ] && [ -z "$MCPC_URL" ]; then
  fail "give 'command' (the stdio server's command line, e.g. 'node build/index.js') or 'url' (e.g. 'http://127.0.0.1:3001/mcp')"
fi
case $MCPC_URL in
  '' | http://* | https://*) ;;
  *) fail "url '$MCPC_URL' is not an http:// or https:// URL (the server's MCP endpoint, e.g. 'http://127.0.0.1:3001/mcp')" ;;
esac
if [ -n "$MCPC_BASELINE" ] && [ ! -f "$MCPC_BASELINE" ]; then
  fail "baseline file '$MCPC_BASELINE' not found (looked in $(pwd)): give a path relative to 'working-directory', or leave 'baseline' empty"
fi
