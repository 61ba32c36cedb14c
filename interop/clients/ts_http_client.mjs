// The official TypeScript SDK client over Streamable HTTP (Client + StreamableHTTPClientTransport)
// against `mcp-echo-server --http`. Usage: node ts_http_client.mjs URL RESULT_JSON
// Exits 0 when every step gave exactly the expected result.
import { readFileSync, writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, resultPath] = process.argv.slice(2);
const sdkVersion = JSON.parse(
  readFileSync(new URL("../node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url)),
).version;
const steps = [];
const expect = (name, ok, detail = "") => {
  steps.push({ name, ok, detail });
  if (!ok) throw new Error(`${name}: ${detail}`);
};

let outcome = { ok: false, error: null };
try {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: "interop-ts-http", version: "1.0.0" });
  await client.connect(transport);
  const info = client.getServerVersion();
  expect("initialize", info?.name === "mcp-echo-server", JSON.stringify(info));
  expect("session id", typeof transport.sessionId === "string" && /^[\x21-\x7e]+$/.test(transport.sessionId), String(transport.sessionId));

  const { tools } = await client.listTools();
  expect("tools/list", tools.length === 1 && tools[0].name === "echo", JSON.stringify(tools.map((t) => t.name)));

  for (const [label, text] of [
    ["echo ascii", "hello from the TypeScript SDK over HTTP"],
    ["echo unicode", "你好 🦀 ü \u2028 \"quoted\"\nnew line"],
    ["echo 1 MiB", "x".repeat(1 << 20)],
  ]) {
    const r = await client.callTool({ name: "echo", arguments: { text } });
    const exact =
      r.content.length === 1 && r.content[0].type === "text" && r.content[0].text === text &&
      r.structuredContent?.text === text && r.isError !== true;
    expect(label, exact, exact ? "" : JSON.stringify(r).slice(0, 200));
  }
  const bad = await client.callTool({ name: "echo", arguments: {} });
  expect("invalid arguments → isError", bad.isError === true, JSON.stringify(bad).slice(0, 200));

  const pong = await client.ping();
  expect("ping", JSON.stringify(pong) === "{}", JSON.stringify(pong));

  // Ends the session with DELETE; the same session id must then be refused with 404.
  const sessionId = transport.sessionId;
  await transport.terminateSession();
  await client.close();
  const after = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": sessionId,
      "mcp-protocol-version": client.getNegotiatedProtocolVersion?.() ?? "2025-11-25",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 99, method: "ping" }),
  });
  expect("ended session → 404", after.status === 404, `status ${after.status}`);
  outcome = { ok: true, error: null };
} catch (e) {
  outcome = { ok: false, error: String(e?.stack ?? e) };
}
const result = {
  client: "TypeScript SDK over HTTP (@modelcontextprotocol/sdk)",
  version: sdkVersion,
  framing: "http",
  ...outcome,
  steps,
};
writeFileSync(resultPath, JSON.stringify(result, null, 2));
console.log(`${result.ok ? "PASS" : "FAIL"} ${result.client} ${result.version}: ${steps.map((s) => `${s.ok ? "✓" : "✗"} ${s.name}`).join(", ")}`);
if (!result.ok) console.error(result.error);
process.exit(result.ok ? 0 : 1);
