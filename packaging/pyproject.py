"""Prints the pyproject.toml maturin builds the wheel from, for the crate at CARGO_TOML.

    python3 pyproject.py CARGO_TOML MATURIN_VERSION > pyproject.toml

Written into a temporary directory beside the data scripts: maturin's bin bindings build the
crate's own binary (mcp-conformance) and the other binaries come in through `data`
(`<name>.data/scripts/`, installed next to it). The version is the crate's, from Cargo.toml.
"""

import json
import sys

TEMPLATE = """\
[build-system]
requires = ["maturin=={maturin}"]
build-backend = "maturin"

[project]
name = "mcp-conformance"
description = "Conformance harness for MCP servers over stdio and Streamable HTTP, with the mcp-echo-server reference server and the mcp-bench benchmark"
readme = "README.md"
requires-python = ">=3.8"
license = "MIT OR Apache-2.0"
keywords = ["mcp", "model-context-protocol", "conformance", "testing"]
classifiers = [
    "Environment :: Console",
    "Operating System :: POSIX :: Linux",
    "Programming Language :: Rust",
    "Topic :: Software Development :: Testing",
]
dynamic = ["version"]

[tool.maturin]
bindings = "bin"
manifest-path = {manifest}
data = "data"
"""

if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    # A TOML basic string and a JSON string agree for a path.
    print(TEMPLATE.format(manifest=json.dumps(sys.argv[1]), maturin=sys.argv[2]), end="")
