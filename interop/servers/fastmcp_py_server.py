"""A small server on FastMCP for Python (PyPI `fastmcp`), over stdio, for the interop suite:
mcp-conformance runs against it."""
from fastmcp import FastMCP

mcp = FastMCP("interop-fastmcp-py", version="0.0.1")


@mcp.tool(annotations={"readOnlyHint": True})
def add(a: float, b: float) -> float:
    """Add two numbers"""
    return a + b


@mcp.tool
def echo(text: str) -> str:
    """Echo text back"""
    return text


if __name__ == "__main__":
    mcp.run(transport="stdio", show_banner=False)
