"""The official Python SDK over Streamable HTTP against `mcp-echo-server --http`: the legacy
session client (ClientSession + streamable_http_client) and the high-level Client in mode
"auto" (server/discover, the stateless 2026-07-28 era). Usage: python py_http_client.py URL
RESULT_JSON. Exits 0 when every step gave exactly the expected result."""

import sys
from importlib.metadata import version

import anyio
from mcp import ClientSession
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from result import Steps

URL, RESULT = sys.argv[1], sys.argv[2]
record = Steps("Python SDK over HTTP (mcp)", version("mcp"), framing="http")
expect = record.expect
TEXTS = [
    ("ascii", "hello from the Python SDK over HTTP"),
    ("unicode", "你好 🦀 ü \u2028 \"quoted\"\nnew line"),
    ("1 MiB", "x" * (1 << 20)),
]


def exact(r, text):
    return (
        len(r.content) == 1
        and r.content[0].type == "text"
        and r.content[0].text == text
        and r.structured_content == {"text": text}
        and not r.is_error
    )


async def main():
    async with streamable_http_client(URL) as (read, write, *_):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            expect("initialize (session)", init.server_info.name == "mcp-echo-server", repr(init.server_info))
            tools = (await session.list_tools()).tools
            expect("tools/list", [t.name for t in tools] == ["echo"], repr([t.name for t in tools]))
            for label, text in TEXTS:
                r = await session.call_tool("echo", {"text": text})
                expect(f"echo {label}", exact(r, text), "" if exact(r, text) else repr(r)[:200])
            bad = await session.call_tool("echo", {})
            expect("invalid arguments → isError", bad.is_error is True, repr(bad)[:200])
            await session.send_ping()
            expect("ping", True)
    async with Client(URL, mode="auto") as client:
        session = client.session
        expect("auto: modern era (server/discover answered)", session.discover_result is not None,
               repr(session.discover_result)[:200])
        expect("auto: version", session.protocol_version == "2026-07-28", repr(session.protocol_version))
        for label, text in TEXTS[1:]:
            r = await client.call_tool("echo", {"text": text})
            expect(f"auto: echo {label}", exact(r, text), "" if exact(r, text) else repr(r)[:200])


error = None
try:
    anyio.run(main)
except BaseException as e:  # noqa: BLE001 - report whatever broke, including ExceptionGroups
    error = repr(e)
sys.exit(record.finish(RESULT, error))
