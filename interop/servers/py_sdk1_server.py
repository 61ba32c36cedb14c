"""A small server on the official Python SDK 1.x (mcp<2, its FastMCP), over stdio, for the interop
suite: mcp-conformance runs against it."""
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

mcp = FastMCP("interop-py-sdk1")


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
def add(a: float, b: float) -> float:
    """Add two numbers"""
    return a + b


@mcp.tool()
def echo(text: str) -> str:
    """Echo text back"""
    return text


if __name__ == "__main__":
    mcp.run("stdio")
