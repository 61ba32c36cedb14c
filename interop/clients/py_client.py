"""The official Python SDK client (mcp on PyPI: ClientSession + stdio_client) against
mcp-echo-server. Usage: python py_client.py SERVER RESULT_JSON. Exits 0 when every step gave
exactly the expected result."""

import sys
import time
from importlib.metadata import version

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from result import Steps

SERVER, RESULT = sys.argv[1], sys.argv[2]
record = Steps("Python SDK (mcp)", version("mcp"))
expect = record.expect


async def main():
    params = StdioServerParameters(command=SERVER, args=[])
    closed_in = None
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            expect("initialize", init.server_info.name == "mcp-echo-server", repr(init.server_info))
            tools = (await session.list_tools()).tools
            expect("tools/list", [t.name for t in tools] == ["echo"], repr([t.name for t in tools]))
            for label, text in [
                ("echo ascii", "hello from the Python SDK"),
                ("echo unicode", "你好 🦀 ü \u2028 \"quoted\"\nnew line"),
                ("echo 1 MiB", "x" * (1 << 20)),
            ]:
                r = await session.call_tool("echo", {"text": text})
                exact = (
                    len(r.content) == 1
                    and r.content[0].type == "text"
                    and r.content[0].text == text
                    and r.structured_content == {"text": text}
                    and not r.is_error
                )
                expect(label, exact, "" if exact else repr(r)[:200])
            bad = await session.call_tool("echo", {})
            expect("invalid arguments → isError", bad.is_error is True, repr(bad)[:200])
            await session.send_ping()
            expect("ping", True)
        started = time.monotonic()
    # Leaving stdio_client closes stdin, waits up to 2 s, then terminates: our server must exit
    # on EOF by itself, well before that.
    closed_in = time.monotonic() - started
    expect("close without a signal", closed_in < 1.9, f"close took {closed_in:.3f} s")


error = None
try:
    anyio.run(main)
except BaseException as e:  # noqa: BLE001 - report whatever broke, including ExceptionGroups
    error = repr(e)
sys.exit(record.finish(RESULT, error))
