"""What the npm packages and the wheel say about themselves, written once for both.

The license is the workspace's ([workspace.package] license in Cargo.toml), like the version.
"""

import pathlib
import tomllib

_CARGO_TOML = pathlib.Path(__file__).resolve().parent.parent / "Cargo.toml"

DESCRIPTION = (
    "Conformance harness for MCP servers over stdio and Streamable HTTP, with the "
    "mcp-echo-server reference server and the mcp-bench benchmark"
)
KEYWORDS = ["mcp", "model-context-protocol", "conformance", "testing"]
with _CARGO_TOML.open("rb") as f:
    LICENSE = tomllib.load(f)["workspace"]["package"]["license"]
