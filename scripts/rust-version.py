#!/usr/bin/env python3
"""Keeps the stated minimum Rust true: the workspace's `rust-version` (Cargo.toml) and the
README's "Needs Rust X or newer" must both be the highest `rust_version` any package in the
locked dependency tree declares (dev-dependencies included: the tests must build too).

    scripts/rust-version.py      exit 0 if they agree, else say what to change and exit 1
"""
import json
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent


def version(text):
    return tuple(int(part) for part in text.split("."))


meta = json.loads(
    subprocess.run(
        ["cargo", "metadata", "--locked", "--format-version", "1"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
)
ours = {p["id"] for p in meta["packages"] if p["source"] is None}
needs = max(
    (version(p["rust_version"]), p["name"], p["version"])
    for p in meta["packages"]
    if p["rust_version"] and p["id"] not in ours
)
need = ".".join(str(n) for n in needs[0][:2])

stated = re.search(r'^rust-version = "([0-9.]+)"', (root / "Cargo.toml").read_text(), re.M)
readme = re.search(r"Needs Rust ([0-9.]+) or newer", (root / "README.md").read_text())
problems = []
if not stated or stated.group(1) != need:
    problems.append(
        f"Cargo.toml says rust-version {stated.group(1) if stated else '(none)'}; "
        f"set it to \"{need}\""
    )
if not readme or readme.group(1) != need:
    problems.append(
        f"README.md says {readme.group(0) if readme else 'no minimum'}; "
        f"make it \"Needs Rust {need} or newer\""
    )
print(f"the locked dependency tree needs Rust {need} ({needs[1]} {needs[2]})")
for p in problems:
    print(f"  {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
