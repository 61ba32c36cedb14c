#!/usr/bin/env bash
# Packages the toolkit's binaries for npm and PyPI (linux x64, glibc), from the binaries cargo
# has already built: nothing is compiled twice.
#
#   packaging/build.sh [--profile dev|release|PROFILE] [--out DIR]
#
# Defaults: --profile release, --out target/packages. It runs
# `cargo build --profile P -p mcp-conformance -p mcp-echo-server -p mcp-bench` (nothing to do
# when those binaries are up to date), takes them from the cargo target dir ($CARGO_TARGET_DIR
# or ./target; profile dev is target/debug), strips copies of them, and writes:
#
#   DIR/npm/mcp-conformance-VERSION.tgz            the launcher package `mcp-conformance`
#   DIR/npm/mcp-conformance-linux-x64-VERSION.tgz  `@mcp-conformance/linux-x64`: every binary
#   DIR/wheel/mcp_conformance-VERSION-py3-none-manylinux_X_Y_x86_64.whl  (maturin, bin bindings)
#
# VERSION is [workspace.package] version in Cargo.toml; X.Y the newest glibc symbol version the
# binaries use (printed). maturin (pinned below) is installed into a venv in the target dir.
# Needs: cargo, python3 (>= 3.11), node + npm, strip, objdump.
set -euo pipefail
MATURIN_VERSION=1.16.0
PACKAGES=(mcp-conformance mcp-echo-server mcp-bench)
PLATFORM_PACKAGE=@mcp-conformance/linux-x64

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
profile=release
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=${2:?--profile needs a cargo profile name (dev, release, ...)}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
out=$(mkdir -p "${out:-$root/target/packages}" && cd "${out:-$root/target/packages}" && pwd)
cd "$root"
target_dir=$(mkdir -p "${CARGO_TARGET_DIR:-target}" && cd "${CARGO_TARGET_DIR:-target}" && pwd)
export CARGO_TARGET_DIR=$target_dir
export PYTHONDONTWRITEBYTECODE=1 # nothing written into the source tree
case "$profile" in
  dev) bin_dir=$target_dir/debug ;;
  *) bin_dir=$target_dir/$profile ;;
esac

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
step() { printf '== %s\n' "$*"; }

cargo_args=()
for p in "${PACKAGES[@]}"; do cargo_args+=(-p "$p"); done
step "cargo build --locked --profile $profile ${cargo_args[*]}"
cargo build --locked --profile "$profile" "${cargo_args[@]}"

# The one version, and every binary target of the packaged crates.
version=$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["workspace"]["package"]["version"])' Cargo.toml)
rust_version=$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["workspace"]["package"]["rust-version"])' Cargo.toml)
mapfile -t bins < <(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
wanted = set(sys.argv[1:])
for p in json.load(sys.stdin)["packages"]:
    if p["name"] in wanted:
        for t in p["targets"]:
            if "bin" in t["kind"]:
                print(t["name"])' "${PACKAGES[@]}")
echo "version $version; binaries: ${bins[*]} (from $bin_dir)"

# Stripped copies: the cargo target dir keeps its debug info.
mkdir -p "$stage/bin"
for b in "${bins[@]}"; do
  [ -x "$bin_dir/$b" ] || { echo "build.sh: $bin_dir/$b was not built" >&2; exit 1; }
  cp "$bin_dir/$b" "$stage/bin/$b"
  strip "$stage/bin/$b"
  chmod 755 "$stage/bin/$b"
done

# The newest glibc symbol version any binary needs: the floor the packages state.
glibc=$(for b in "${bins[@]}"; do objdump -T "$stage/bin/$b"; done \
  | grep -o 'GLIBC_[0-9]*\.[0-9]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
[ -n "$glibc" ] || { echo "build.sh: found no GLIBC_ symbol versions in the binaries" >&2; exit 1; }
echo "the binaries need glibc >= $glibc (newest GLIBC_ symbol version they use)"

rm -rf "$out/npm" "$out/wheel"
mkdir -p "$out/npm" "$out/wheel"

step "npm: $PLATFORM_PACKAGE and mcp-conformance $version"
platform_dir=$stage/npm-platform
launcher_dir=$stage/npm-launcher
mkdir -p "$platform_dir/bin" "$launcher_dir/bin" "$launcher_dir/lib"
cp -p "$stage/bin/"* "$platform_dir/bin/"
cp "$here/README.md" "$platform_dir/README.md"
cp "$here/README.md" "$launcher_dir/README.md"
sed -e "s|@PLATFORM_PACKAGE@|$PLATFORM_PACKAGE|" -e "s|@VERSION@|$version|" \
  -e "s|@GLIBC@|$glibc|" -e "s|@RUST_VERSION@|$rust_version|" \
  "$here/npm/launch.js" > "$launcher_dir/lib/launch.js"
if grep -n '@[A-Z_]*@' "$launcher_dir/lib/launch.js"; then
  echo "build.sh: a placeholder in packaging/npm/launch.js was left unfilled" >&2
  exit 1
fi
for b in "${bins[@]}"; do
  printf '#!/usr/bin/env node\n'"'"'use strict'"'"';\nrequire('"'"'../lib/launch.js'"'"')('"'"'%s'"'"');\n' "$b" \
    > "$launcher_dir/bin/$b.js"
  chmod 755 "$launcher_dir/bin/$b.js"
done
python3 "$here/npm_manifests.py" "$version" "$glibc" "$PLATFORM_PACKAGE" \
  "$platform_dir/package.json" "$launcher_dir/package.json" "${bins[@]}"
(cd "$platform_dir" && npm pack --silent --pack-destination "$out/npm" > /dev/null)
(cd "$launcher_dir" && npm pack --silent --pack-destination "$out/npm" > /dev/null)

step "wheel: mcp-conformance $version with maturin $MATURIN_VERSION (bin bindings)"
venv=$target_dir/packaging-venv
if ! "$venv/bin/maturin" --version 2>/dev/null | grep -qx "maturin $MATURIN_VERSION"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "maturin==$MATURIN_VERSION"
fi
# maturin builds the crate's own binary (mcp-conformance, fresh from the cargo build above);
# the other binaries go in through the wheel's data scripts, installed beside it.
wheel_dir=$stage/wheel
mkdir -p "$wheel_dir/data/scripts"
for b in "${bins[@]}"; do
  [ "$b" = mcp-conformance ] || cp -p "$stage/bin/$b" "$wheel_dir/data/scripts/$b"
done
cp "$here/README.md" "$wheel_dir/README.md"
python3 "$here/pyproject.py" "$root/conformance/Cargo.toml" "$MATURIN_VERSION" > "$wheel_dir/pyproject.toml"
tag=manylinux_${glibc//./_}
(cd "$wheel_dir" && "$venv/bin/maturin" build --profile "$profile" --locked \
  --compatibility "$tag" --auditwheel check --out "$wheel_dir/out") 2>&1 | tee "$stage/maturin.log"
if grep -q 'Compiling' "$stage/maturin.log"; then
  echo "build.sh: maturin compiled something again (see above): mcp-conformance built alone" \
    "resolves other dependency features than the workspace build; align them in" \
    "[workspace.dependencies] (Cargo.toml)" >&2
  exit 1
fi
whl=$(ls "$wheel_dir/out/"*.whl)
case "$(basename "$whl")" in
  "mcp_conformance-$version-py3-none-$tag"_x86_64.whl) ;;
  *) echo "build.sh: maturin wrote $(basename "$whl"), not version $version with tag $tag" >&2; exit 1 ;;
esac
python3 "$here/strip_wheel.py" "$whl" "$out/wheel/$(basename "$whl")"

step "packages (glibc >= $glibc)"
for f in "$out"/npm/*.tgz "$out"/wheel/*.whl; do
  printf '%12s bytes  %s\n' "$(stat -c %s "$f")" "$f"
done
