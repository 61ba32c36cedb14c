#!/usr/bin/env bash
# The action's second step (action.yml): installs mcp-conformance with npm into a fresh
# directory under $RUNNER_TEMP (never into the user's project), from the npm registry, or from
# MCPC_PACKAGES (a `packaging/build.sh --out` directory) offline. Writes the output `bin`: the
# directory of the installed executables, also added to $GITHUB_PATH so later steps (and the
# server command, e.g. `mcp-echo-server`) find them.
set -euo pipefail

fail() {
  echo "::error title=mcp-conformance action::$1"
  exit 2
}

# The harness version of the action's own ref: [workspace.package] version in its Cargo.toml,
# the one place versions are written.
cargo_version() {
  awk '
    /^\[/ { in_section = ($0 == "[workspace.package]") }
    in_section && /^version[[:space:]]*=/ {
      sub(/^version[[:space:]]*=[[:space:]]*"/, ""); sub(/".*$/, ""); print; exit
    }
  ' "$GITHUB_ACTION_PATH/Cargo.toml"
}

version=${MCPC_VERSION:-}
if [ -z "$version" ]; then
  version=$(cargo_version)
  [ -n "$version" ] || fail "cannot read [workspace.package] version from $GITHUB_ACTION_PATH/Cargo.toml: give the 'version' input"
fi

prefix=$(mktemp -d "$RUNNER_TEMP/mcp-conformance.XXXXXX")
npm_flags=(--prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error)
if [ -n "${MCPC_PACKAGES:-}" ]; then
  launcher="$MCPC_PACKAGES/npm/mcp-conformance-$version.tgz"
  platform="$MCPC_PACKAGES/npm/mcp-conformance-linux-x64-$version.tgz"
  for tarball in "$launcher" "$platform"; do
    [ -f "$tarball" ] || fail "'packages' has no $tarball (built version $version? see packaging/build.sh)"
  done
  echo "Installing mcp-conformance $version from $MCPC_PACKAGES (offline)"
  # Local tarballs only: --offline and an unreachable registry make sure nothing is fetched.
  npm install "${npm_flags[@]}" --offline --registry http://127.0.0.1:9/ "$launcher" "$platform" \
    || fail "npm could not install $launcher and $platform (see above)"
else
  echo "Installing mcp-conformance@$version from the npm registry"
  npm install "${npm_flags[@]}" "mcp-conformance@$version" \
    || fail "npm could not install mcp-conformance@$version (see above): is that version published, and the npm registry reachable?"
fi

bin="$prefix/node_modules/.bin"
installed=$("$bin/mcp-conformance" --version) || fail "the installed mcp-conformance does not run (see above)"
[ "$installed" = "mcp-conformance $version" ] \
  || fail "asked for mcp-conformance $version, but the installed one says '$installed'"
echo "$installed installed in $prefix"
echo "$bin" >> "$GITHUB_PATH"
echo "bin=$bin" >> "$GITHUB_OUTPUT"
