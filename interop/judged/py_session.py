"""The Python SDK's ClientSession over stdio_client or streamable_http_client, as
`mcp-conformance client` runs it: the last argument is the server (a relay executable over
stdio, a URL over HTTP). It declares roots, sampling and elicitation (through callbacks), lists
tools, calls add_numbers (2 s timeout), and closes."""

import sys
from datetime import timedelta

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

TARGET = sys.argv[-1]


async def roots(context):
    return types.ListRootsResult(roots=[types.Root(uri="file:///tmp", name="tmp")])


async def sampling(context, params):
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="hi"), model="judged")


async def elicitation(context, params):
    return types.ElicitResult(action="decline")


async def session(read, write):
    async with ClientSession(read, write, list_roots_callback=roots, sampling_callback=sampling,
                             elicitation_callback=elicitation) as s:
        await s.initialize()
        await s.list_tools()
        try:
            await s.call_tool("add_numbers", {"a": 1, "b": 2},
                              read_timeout_seconds=timedelta(seconds=2))
        except Exception as e:  # noqa: BLE001 - the timeout scenario: report and close
            print(f"judged-py-session: {e}", file=sys.stderr)
            # As an application would: go on for a moment before closing, so what the SDK sends
            # when it gives up on a request is not cut off by the close.
            await anyio.sleep(0.3)


async def main():
    if TARGET.startswith("http"):
        try:
            from mcp.client.streamable_http import streamable_http_client as http_client
        except ImportError:  # the 1.x name
            from mcp.client.streamable_http import streamablehttp_client as http_client
        async with http_client(TARGET) as streams:
            await session(streams[0], streams[1])
    else:
        async with stdio_client(StdioServerParameters(command=TARGET, args=[])) as (read, write):
            await session(read, write)


anyio.run(main)
