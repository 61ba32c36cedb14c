"""An echo server on the official Python SDK (mcp on PyPI, MCPServer), for the interop suite:
mcp-conformance runs against it over stdio."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("py-echo")


@server.tool()
def echo(text: str) -> str:
    """Returns the given text unchanged."""
    return text


if __name__ == "__main__":
    server.run()  # stdio
