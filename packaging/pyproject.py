"""Prints the pyproject.toml maturin builds the wheel from, for the crate at CARGO_TOML.

    python3 pyproject.py CARGO_TOML MATURIN_VERSION > pyproject.toml

Written into a temporary directory beside the data scripts: maturin's bin bindings build the
crate's own binary (mcp-conformance) and the other binaries come in through `data`
(`<name>.data/scripts/`, installed next to it). The version is the crate's, from Cargo.toml.
"""

import json
import sys

from meta import DESCRIPTION, KEYWORDS, LICENSE

TEMPLATE = """\
[build-system]
requires = ["maturin=={maturin}"]
build-backend = "maturin"

[project]
name = "mcp-conformance"
description = {description}
readme = "README.md"
requires-python = ">=3.8"
license = {license}
keywords = {keywords}
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
    # A TOML basic string and a JSON string agree for these (paths, plain text); so do arrays.
    print(
        TEMPLATE.format(
            manifest=json.dumps(sys.argv[1]),
            maturin=sys.argv[2],
            description=json.dumps(DESCRIPTION),
            license=json.dumps(LICENSE),
            keywords=json.dumps(KEYWORDS),
        ),
        end="",
    )
