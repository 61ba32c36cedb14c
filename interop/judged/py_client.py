"""The Python SDK's high-level client (mcp.client.Client, mode "auto": probes server/discover,
falls back to initialize), as `mcp-conformance client` runs it: the last argument is the server
(a relay executable over stdio, a URL over HTTP)."""

import sys

import anyio
from mcp import StdioServerParameters, types
from mcp.client.client import Client

TARGET = sys.argv[-1]


async def roots(context):
    return types.ListRootsResult(roots=[types.Root(uri="file:///tmp", name="tmp")])


async def sampling(context, params):
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="hi"), model="judged")


async def elicitation(context, params):
    return types.ElicitResult(action="decline")


async def main():
    server = TARGET if TARGET.startswith("http") else StdioServerParameters(command=TARGET, args=[])
    async with Client(server, mode="auto", read_timeout_seconds=2, list_roots_callback=roots,
                      sampling_callback=sampling, elicitation_callback=elicitation) as client:
        await client.list_tools()
        try:
            await client.call_tool("add_numbers", {"a": 1, "b": 2})
        except Exception as e:  # noqa: BLE001 - the timeout scenario: report and close
            print(f"judged-py-client: {e}", file=sys.stderr)
            # As an application would: go on for a moment before closing, so what the SDK sends
            # when it gives up on a request is not cut off by the close.
            await anyio.sleep(0.3)


anyio.run(main)
