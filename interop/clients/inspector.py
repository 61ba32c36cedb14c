"""The MCP Inspector CLI (@modelcontextprotocol/inspector --cli) against mcp-echo-server:
tools/list and tools/call, output checked exactly. SERVER is the server's command, or the URL
of `mcp-echo-server --http` (then the Inspector speaks Streamable HTTP).
Usage: python inspector.py NODE INSPECTOR_BIN SERVER RESULT_JSON"""

import json
import subprocess
import sys

from result import Steps

NODE, INSPECTOR, SERVER, RESULT = sys.argv[1:5]
HTTP = SERVER.startswith(("http://", "https://"))
TARGET = [SERVER, "--transport", "http"] if HTTP else [SERVER]


def run(*args):
    out = subprocess.run(
        [NODE, INSPECTOR, "--cli", *TARGET, *args],
        capture_output=True, text=True, timeout=120, check=False,
    )
    if out.returncode != 0:
        raise AssertionError(f"inspector {' '.join(args)} exited {out.returncode}: {out.stderr[-500:]}")
    return json.loads(out.stdout)


version = subprocess.run([NODE, INSPECTOR, "--version"], capture_output=True, text=True,
                         timeout=60, check=False).stdout.strip()
if HTTP:
    record = Steps("MCP Inspector CLI over HTTP (@modelcontextprotocol/inspector --cli)", version, framing="http")
else:
    record = Steps("MCP Inspector CLI (@modelcontextprotocol/inspector --cli)", version)
expect = record.expect
error = None
try:
    listed = run("--method", "tools/list")
    expect("tools/list", [t["name"] for t in listed["tools"]] == ["echo"], json.dumps(listed)[:200])
    text = "hello from the Inspector 你好 🦀"
    called = run("--method", "tools/call", "--tool-name", "echo", "--tool-arg", f"text={text}")
    want = {"content": [{"type": "text", "text": text}], "structuredContent": {"text": text}}
    expect("tools/call echo", called == want, json.dumps(called)[:200])
except Exception as e:  # noqa: BLE001 - any failure is the result
    error = repr(e)
sys.exit(record.finish(RESULT, error))
