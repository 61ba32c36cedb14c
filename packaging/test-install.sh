#!/usr/bin/env bash
# Installs the packages packaging/build.sh wrote to DIR, each into an empty directory and with
# no network (npm --offline against a registry address nothing listens on, pip --no-index),
# and runs the harness from each install:
#   (a) against the bundled mcp-echo-server, found beside the harness: exit 0
#   (b) over Streamable HTTP, against the installed mcp-echo-server --http: exit 0
#   (c) against a real server, server-everything (from interop/node_modules), with its
#       baseline: exit 0
# (npm install and pip install; npx and uvx run the first), and, through the npm launcher:
#   (d) exit codes passed on: a usage error 2, a failing check 1
#   (e) SIGTERM passed on: the launcher ends 143 and no process of the run is left; a binary
#       killed by a signal: the launcher dies of the same signal
#   (f) on another platform (process.platform made 'darwin'), on musl, on an older glibc, and
#       without the platform package: a clear message and exit 1
# It prints each package's size and the time from an empty directory to the first report.
#
#   packaging/test-install.sh DIR          (DIR as given to build.sh --out)
#
# Needs node + npm, python3. Tools it installs when absent, the only network it uses (never for
# the packages under test): uv (pinned below) into the target dir's venv, beside build.sh's
# maturin; server-everything is taken from interop/node_modules (installed by interop/run.sh from
# its lock file), or else that version alone is installed from npm into the target dir.
set -euo pipefail
UV_VERSION=0.13.8 # uvx runs the wheel as users would; installed into the target dir's venv
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
[ $# -eq 1 ] || { echo "usage: packaging/test-install.sh DIR (the --out of build.sh)" >&2; exit 2; }
dir=$(cd "$1" && pwd)
shopt -s nullglob
launchers=("$dir"/npm/mcp-conformance-[0-9]*.tgz)
platforms=("$dir"/npm/mcp-conformance-linux-x64-*.tgz)
wheels=("$dir"/wheel/mcp_conformance-*.whl)
shopt -u nullglob
if [ ${#launchers[@]} -ne 1 ] || [ ${#platforms[@]} -ne 1 ] || [ ${#wheels[@]} -ne 1 ]; then
  echo "test-install.sh: $dir must hold npm/mcp-conformance-VERSION.tgz," \
    "npm/mcp-conformance-linux-x64-VERSION.tgz and one wheel/mcp_conformance-*.whl" \
    "(run packaging/build.sh --out $dir)" >&2
  exit 1
fi
launcher_tgz=${launchers[0]}
platform_tgz=${platforms[0]}
wheel=${wheels[0]}

work=$(mktemp -d)
marker="pack-test-hang-$$-$RANDOM"
bg_pid=""
cleanup() {
  [ -n "$bg_pid" ] && kill -KILL "$bg_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }
fail() {
  echo "test-install.sh: FAIL: $*" >&2
  exit 1
}
now() { date +%s.%N; }
since() { python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.1f}")' "$1" "$(now)"; }
# Runs a command, its output in a log; fails unless it exits with the expected code.
expect() { # name, expected exit code, command...
  local name=$1 want=$2 rc=0 log
  shift 2
  log="$work/$(tr -c 'a-zA-Z0-9\n' _ <<<"$name").log"
  "$@" > "$log" 2>&1 || rc=$?
  if [ "$rc" -ne "$want" ]; then
    tail -n 40 "$log" >&2
    fail "$name: exit $rc, expected $want (command: $*)"
  fi
  echo "ok: $name (exit $rc)"
}
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The real server: server-everything as interop/run.sh installs it (pinned by its lock file);
# without that install, the same version alone, once, into the cargo target dir.
everything=$root/interop/node_modules/.bin/mcp-server-everything
if [ ! -e "$everything" ]; then
  version=$(node -p 'require(process.argv[1]).dependencies["@modelcontextprotocol/server-everything"]' \
    "$root/interop/package.json")
  peers=$(cd "$root" && mkdir -p "${CARGO_TARGET_DIR:-target}" && cd "${CARGO_TARGET_DIR:-target}" && pwd)/packaging-peers
  everything=$peers/node_modules/.bin/mcp-server-everything
  installed=$(node -p 'require(process.argv[1]).version' \
    "$peers/node_modules/@modelcontextprotocol/server-everything/package.json" 2>/dev/null || true)
  if [ "$installed" != "$version" ]; then
    step "installing @modelcontextprotocol/server-everything@$version (interop/ has not installed its peers)"
    npm install --prefix "$peers" --no-audit --no-fund --loglevel=error \
      "@modelcontextprotocol/server-everything@$version"
  fi
fi
node_for_everything=$root/interop/node_modules/.bin/node
[ -x "$node_for_everything" ] || node_for_everything=$(command -v node)
baseline=$root/interop/baselines/everything.txt

# The three runs every install must pass; BIN_DIR holds the installed commands.
runs() { # label, bin dir
  local label=$1 bin=$2 port
  expect "$label: (a) bundled server" 0 "$bin/mcp-conformance" --quiet
  port=$(free_port)
  expect "$label: (b) Streamable HTTP, mcp-echo-server --http" 0 \
    "$bin/mcp-conformance" --quiet --url "http://127.0.0.1:$port/mcp" \
    -- "$bin/mcp-echo-server" --http "127.0.0.1:$port"
  expect "$label: (c) server-everything with its baseline" 0 \
    "$bin/mcp-conformance" --quiet --timeout 3 --jobs 2 --expected-failures "$baseline" \
    -- "$node_for_everything" "$everything"
}
size() { stat -c %s "$1"; }
summary=()

step "npm: npm install, offline, into an empty directory"
d=$work/npm
mkdir "$d"
start=$(now)
npm install --prefix "$d" --offline --registry http://127.0.0.1:9/ --cache "$work/npm-cache" \
  --no-audit --no-fund --loglevel=error "$platform_tgz" "$launcher_tgz" > "$work/npm-install.log" 2>&1 \
  || { cat "$work/npm-install.log" >&2; fail "npm install of $launcher_tgz and $platform_tgz"; }
expect "npm: first report (bundled server)" 0 "$d/node_modules/.bin/mcp-conformance" --quiet
npm_time=$(since "$start")
npm_installed=$(du -sb "$d/node_modules" | cut -f1)
runs npm "$d/node_modules/.bin"
for tool in mcp-echo-server mcp-bench; do
  expect "npm: $tool --version" 0 "$d/node_modules/.bin/$tool" --version
done
summary+=("npm: mcp-conformance $(size "$launcher_tgz") B + @mcp-conformance/linux-x64 $(size "$platform_tgz") B (tarballs), $npm_installed B installed; empty dir to first report: ${npm_time} s")

step "npm launcher: exit codes and signals passed on"
L=$d/node_modules/.bin/mcp-conformance
expect "npm: (d) usage error" 2 "$L" --no-such-option
expect "npm: (d) a failing check" 1 "$L" --quiet --timeout 3 --only jsonrpc.batch-2025-03-26 \
  -- "$node_for_everything" "$everything"
# (e) A server that never answers: the harness waits on it until SIGTERM arrives. The marker is
# in every command line of the run (launcher, harness, server), so pgrep finds any leftover.
"$L" --quiet --start-timeout 600 -- python3 -c 'import sys; sys.stdin.read()' "$marker" \
  > "$work/sigterm.log" 2>&1 &
bg_pid=$!
server_up=false
for _ in $(seq 600); do # the server process appears: the launcher, harness and server all run
  if pgrep -f "^[^ ]*python3 -c .*$marker" > /dev/null \
    && pgrep -P "$bg_pid" > /dev/null; then
    server_up=true
    break
  fi
  kill -0 "$bg_pid" 2>/dev/null || break
  sleep 0.1
done
$server_up || { cat "$work/sigterm.log" >&2; fail "(e) the hanging server never started under the launcher"; }
kill -TERM "$bg_pid"
# Bounded, so a launcher that ignores SIGTERM fails this test instead of hanging it.
for _ in $(seq 600); do
  kill -0 "$bg_pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$bg_pid" 2>/dev/null; then
  for pid in $(pgrep -f "$marker"); do kill -KILL "$pid" 2>/dev/null || true; done
  fail "(e) the launcher was still running 60 s after SIGTERM"
fi
rc=0
wait "$bg_pid" || rc=$?
bg_pid=""
[ "$rc" -eq 143 ] || { cat "$work/sigterm.log" >&2; fail "(e) the launcher exited $rc on SIGTERM, expected 143"; }
if pgrep -af "$marker" >&2; then
  fail "(e) processes of the interrupted run are left (listed above)"
fi
echo "ok: npm: (e) SIGTERM to the launcher: exit 143, no process left"
# A binary killed by a signal: the launcher dies of the same one (a shell sees 128 + 9).
mkfifo "$work/stdin"
"$d/node_modules/.bin/mcp-echo-server" < "$work/stdin" > /dev/null 2> "$work/sigkill.log" &
bg_pid=$!
exec 3> "$work/stdin" # the server's stdin stays open: it waits for requests
child=""
for _ in $(seq 600); do
  child=$(pgrep -P "$bg_pid" -f 'bin/mcp-echo-server$' || true)
  [ -n "$child" ] && break
  kill -0 "$bg_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$child" ] || { exec 3>&-; cat "$work/sigkill.log" >&2; fail "(e) mcp-echo-server never started under the launcher"; }
kill -KILL "$child"
rc=0
wait "$bg_pid" || rc=$?
bg_pid=""
exec 3>&-
[ "$rc" -eq 137 ] || { cat "$work/sigkill.log" >&2; fail "(e) the launcher of a binary killed by SIGKILL exited $rc, expected 137 (killed by the same signal)"; }
echo "ok: npm: (e) the binary killed by SIGKILL: the launcher dies of SIGKILL too (137)"
# (f) Another platform, musl, an old glibc (each faked with node -r): the launcher says what
# ships and how to build from source, and exits 1.
refused() { # label, preload script, the platform the message must name
  local rc=0 log="$work/refused-$1.log"
  node -r "$2" "$d/node_modules/mcp-conformance/bin/mcp-conformance.js" --help > "$log" 2>&1 || rc=$?
  if ! { [ "$rc" -eq 1 ] && grep -qF "no prebuilt binary for $3 yet" "$log" \
    && grep -q 'linux x64 with glibc >= [0-9]' "$log" \
    && grep -q 'cargo install --locked --path conformance' "$log"; }; then
    cat "$log" >&2
    fail "(f) on $3: exit $rc, or not the expected message"
  fi
  if [ "$1" = darwin ]; then
    echo "ok: npm: (f) on $3: exit 1 with:"
    sed 's/^/    /' "$log"
  else
    echo "ok: npm: (f) on $3: exit 1 with: $(head -1 "$log") ..."
  fi
}
printf '%s\n' "Object.defineProperty(process, 'platform', { value: 'darwin' });" > "$work/darwin.js"
refused darwin "$work/darwin.js" darwin-x64
report_with() { # a change to the header of node's diagnostic report (which names the glibc)
  printf '%s\n' 'const real = process.report.getReport.bind(process.report);' \
    "Object.defineProperty(process.report, 'getReport', {" \
    "  value: () => { const r = real(); $1; return r; }," '});'
}
report_with 'delete r.header.glibcVersionRuntime' > "$work/musl.js"
refused musl "$work/musl.js" 'linux-x64 with musl libc (no glibc)'
report_with "r.header.glibcVersionRuntime = '2.17'" > "$work/oldglibc.js"
refused oldglibc "$work/oldglibc.js" 'linux-x64 with glibc 2.17'
# Without the platform package (npm skipped the optional dependency): a clear message too.
d2=$work/npm-launcher-only
mkdir "$d2"
npm install --prefix "$d2" --offline --registry http://127.0.0.1:9/ --cache "$work/npm-cache2" \
  --no-audit --no-fund --loglevel=error --omit=optional "$launcher_tgz" > /dev/null 2>&1 \
  || fail "npm install of $launcher_tgz alone"
rc=0
"$d2/node_modules/.bin/mcp-conformance" --help > "$work/noplatform.log" 2>&1 || rc=$?
if ! { [ "$rc" -eq 1 ] && grep -q '@mcp-conformance/linux-x64@.* is not installed' "$work/noplatform.log"; }; then
  cat "$work/noplatform.log" >&2
  fail "(f) without the platform package: exit $rc, or not the expected message"
fi
echo "ok: npm: (f) without the platform package: exit 1 with: $(head -1 "$work/noplatform.log")"

step "npx: straight from the tarballs, offline, in an empty directory"
d=$work/npx
mkdir "$d"
start=$(now)
(cd "$d" && npx --offline --yes --registry http://127.0.0.1:9/ --cache "$work/npx-cache" \
  -p "$launcher_tgz" -p "$platform_tgz" mcp-conformance --quiet) > "$work/npx.log" 2>&1 \
  || { cat "$work/npx.log" >&2; fail "npx mcp-conformance from the tarballs"; }
npx_time=$(since "$start")
echo "ok: npx: first report (bundled server)"
summary+=("npx: empty dir (and empty npm cache) to first report: ${npx_time} s")

step "pip: a fresh venv, pip install --no-index --no-deps"
d=$work/pip
start=$(now)
python3 -m venv "$d"
venv_time=$(since "$start")
"$d/bin/pip" install --quiet --disable-pip-version-check --no-index --no-deps "$wheel" \
  || fail "pip install $wheel"
expect "pip: first report (bundled server)" 0 "$d/bin/mcp-conformance" --quiet
pip_time=$(since "$start")
pip_installed=$(python3 - "$d" <<'EOF'
import glob, os, sys
venv = sys.argv[1]
record = glob.glob(os.path.join(venv, "lib/python*/site-packages/mcp_conformance-*.dist-info/RECORD"))[0]
site = os.path.dirname(os.path.dirname(record))
total = 0
for line in open(record):
    path = os.path.normpath(os.path.join(site, line.rsplit(",", 2)[0]))
    if os.path.isfile(path):
        total += os.path.getsize(path)
print(total)
EOF
)
runs pip "$d/bin"
for tool in mcp-echo-server mcp-bench; do
  expect "pip: $tool --version" 0 "$d/bin/$tool" --version
done
summary+=("wheel: $(basename "$wheel") $(size "$wheel") B, $pip_installed B installed; empty dir to first report (python3 -m venv, pip install, run): ${pip_time} s, ${venv_time} s of it making the venv")

step "uvx: straight from the wheel, offline, empty uv cache (uv $UV_VERSION)"
target_dir=$(cd "$root" && mkdir -p "${CARGO_TARGET_DIR:-target}" && cd "${CARGO_TARGET_DIR:-target}" && pwd)
venv=$target_dir/packaging-venv
if ! "$venv/bin/uv" --version 2>/dev/null | grep -q "^uv $UV_VERSION\b"; then
  [ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "uv==$UV_VERSION"
fi
d=$work/uvx
mkdir "$d"
uvx() { (cd "$d" && UV_CACHE_DIR="$work/uv-cache" UV_TOOL_DIR="$work/uv-tools" "$venv/bin/uvx" --offline --no-config --from "$wheel" "$@"); }
start=$(now)
expect "uvx: first report (bundled server)" 0 uvx mcp-conformance --quiet
uvx_time=$(since "$start")
expect "uvx: mcp-echo-server --version" 0 uvx mcp-echo-server --version
summary+=("uvx: empty dir (and empty uv cache) to first report: ${uvx_time} s")

step "summary"
printf '%s\n' "${summary[@]}"
echo "test-install: all packages installed offline and passed"
