"""The Python SDK's high-level client (mcp.client.Client, mode "auto": probes server/discover,
falls back to initialize) against mcp-echo-server: it must end up in the modern era.
Usage: python py_modern_client.py SERVER RESULT_JSON"""

import sys
import time
from importlib.metadata import version

import anyio
from mcp import StdioServerParameters
from mcp.client.client import Client

from result import Steps

SERVER, RESULT = sys.argv[1], sys.argv[2]
record = Steps("Python SDK high-level Client (mcp.client.Client, mode auto)", version("mcp"))
expect = record.expect


async def main():
    async with Client(StdioServerParameters(command=SERVER, args=[]), mode="auto") as client:
        session = client.session
        expect("auto: modern era (server/discover answered)", session.discover_result is not None,
               repr(session.discover_result)[:200])
        expect("auto: version", session.protocol_version == "2026-07-28", repr(session.protocol_version))
        tools = (await client.list_tools()).tools
        expect("auto: tools/list", [t.name for t in tools] == ["echo"], repr([t.name for t in tools]))
        for label, text in [("unicode", "你好 🦀 ü\nnew line"), ("1 MiB", "z" * (1 << 20))]:
            r = await client.call_tool("echo", {"text": text})
            exact = r.content[0].text == text and r.structured_content == {"text": text} and not r.is_error
            expect(f"auto: echo {label}", exact, "" if exact else repr(r)[:200])
        started = time.monotonic()
    took = time.monotonic() - started
    expect("auto: close", took < 1.9, f"close took {took:.3f} s")


error = None
try:
    anyio.run(main)
except BaseException as e:  # noqa: BLE001 - report whatever broke, including ExceptionGroups
    error = repr(e)
sys.exit(record.finish(RESULT, error))
