"""An echo server on the official Python SDK (mcp on PyPI, MCPServer), for the interop suite:
mcp-conformance runs against it over stdio, and over Streamable HTTP with `--http PORT`
(http://127.0.0.1:PORT/mcp, the SDK's defaults otherwise: SSE replies, sessions)."""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("py-echo")


@server.tool()
def echo(text: str) -> str:
    """Returns the given text unchanged."""
    return text


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()  # stdio
