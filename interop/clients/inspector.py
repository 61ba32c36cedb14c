"""The MCP Inspector CLI (@modelcontextprotocol/inspector --cli) against mcp-echo-server:
tools/list and tools/call, output checked exactly.
Usage: python inspector.py NODE INSPECTOR_BIN SERVER RESULT_JSON"""

import json
import subprocess
import sys

NODE, INSPECTOR, SERVER, RESULT = sys.argv[1:5]
steps = []


def run(*args):
    out = subprocess.run(
        [NODE, INSPECTOR, "--cli", SERVER, *args],
        capture_output=True, text=True, timeout=120, check=False,
    )
    if out.returncode != 0:
        raise AssertionError(f"inspector {' '.join(args)} exited {out.returncode}: {out.stderr[-500:]}")
    return json.loads(out.stdout)


def expect(name, ok, detail=""):
    steps.append({"name": name, "ok": bool(ok), "detail": detail})
    if not ok:
        raise AssertionError(f"{name}: {detail}")


version = subprocess.run([NODE, INSPECTOR, "--version"], capture_output=True, text=True,
                         timeout=60, check=False).stdout.strip()
result = {"client": "MCP Inspector CLI (@modelcontextprotocol/inspector --cli)",
          "version": version, "framing": "ndjson"}
try:
    listed = run("--method", "tools/list")
    expect("tools/list", [t["name"] for t in listed["tools"]] == ["echo"], json.dumps(listed)[:200])
    text = "hello from the Inspector 你好 🦀"
    called = run("--method", "tools/call", "--tool-name", "echo", "--tool-arg", f"text={text}")
    want = {"content": [{"type": "text", "text": text}], "structuredContent": {"text": text}}
    expect("tools/call echo", called == want, json.dumps(called)[:200])
    result.update(ok=True, error=None)
except Exception as e:  # noqa: BLE001 - any failure is the result
    result.update(ok=False, error=repr(e))
result["steps"] = steps
with open(RESULT, "w") as f:
    json.dump(result, f, indent=2)
marks = ", ".join(("✓ " if s["ok"] else "✗ ") + s["name"] for s in steps)
print(f"{'PASS' if result['ok'] else 'FAIL'} {result['client']} {result['version']}: {marks}")
if not result["ok"]:
    print(result["error"], file=sys.stderr)
sys.exit(0 if result["ok"] else 1)
