"""Writes the package.json of the npm platform package and of the launcher package.

    python3 npm_manifests.py VERSION GLIBC PLATFORM_PACKAGE PLATFORM_JSON LAUNCHER_JSON BIN...

Both carry VERSION (from Cargo.toml), and the launcher depends on the platform package at
exactly that version, as an optional dependency: npm installs it only where os, cpu and libc
match, and the launcher says what to do where none does.
"""

import json
import sys

from meta import DESCRIPTION, KEYWORDS, LICENSE


def write(path: str, manifest: dict) -> None:
    with open(path, "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")


def main(version, glibc, platform_package, platform_json, launcher_json, *bins):
    write(
        platform_json,
        {
            "name": platform_package,
            "version": version,
            "description": f"The linux x64 (glibc >= {glibc}) binaries of mcp-conformance",
            "license": LICENSE,
            "os": ["linux"],
            "cpu": ["x64"],
            "libc": ["glibc"],
            "files": ["bin", "README.md"],
            "preferUnplugged": True,
        },
    )
    write(
        launcher_json,
        {
            "name": "mcp-conformance",
            "version": version,
            "description": DESCRIPTION,
            "keywords": KEYWORDS,
            "license": LICENSE,
            "bin": {b: f"bin/{b}.js" for b in bins},
            "files": ["bin", "lib", "README.md"],
            "engines": {"node": ">=18"},
            "optionalDependencies": {platform_package: version},
        },
    )


if __name__ == "__main__":
    if len(sys.argv) < 7:
        sys.exit(__doc__)
    main(*sys.argv[1:])
