// The TypeScript SDK 2.x client (@modelcontextprotocol/client) against mcp-echo-server, once
// with versionNegotiation 'auto' (probes server/discover and must end up in the modern era,
// 2026-07-28) and once with 'legacy' (the initialize handshake).
// Usage: node ts2_client.mjs SERVER RESULT_JSON
import { readFileSync, writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [server, resultPath] = process.argv.slice(2);
const version = JSON.parse(
  readFileSync(new URL("../node_modules/@modelcontextprotocol/client/package.json", import.meta.url)),
).version;
const steps = [];
const expect = (name, ok, detail = "") => {
  steps.push({ name, ok, detail });
  if (!ok) throw new Error(`${name}: ${detail}`);
};

async function session(mode, wantEra, wantVersion) {
  const transport = new StdioClientTransport({ command: server, args: [], stderr: "pipe" });
  const client = new Client(
    { name: "interop-ts2", version: "1.0.0" },
    { versionNegotiation: { mode, probe: { timeoutMs: 5000 } } },
  );
  await client.connect(transport);
  expect(`${mode}: era`, client.getProtocolEra() === wantEra, String(client.getProtocolEra()));
  expect(
    `${mode}: version`,
    client.getNegotiatedProtocolVersion() === wantVersion,
    String(client.getNegotiatedProtocolVersion()),
  );
  const { tools } = await client.listTools();
  expect(`${mode}: tools/list`, tools.length === 1 && tools[0].name === "echo", JSON.stringify(tools.map((t) => t.name)));
  for (const [label, text] of [["unicode", "你好 🦀 ü\nnew line"], ["1 MiB", "y".repeat(1 << 20)]]) {
    const r = await client.callTool({ name: "echo", arguments: { text } });
    const exact = r.content?.[0]?.text === text && r.structuredContent?.text === text && r.isError !== true;
    expect(`${mode}: echo ${label}`, exact, exact ? "" : JSON.stringify(r).slice(0, 200));
  }
  const started = Date.now();
  await client.close();
  expect(`${mode}: close`, Date.now() - started < 1900, `close took ${Date.now() - started} ms`);
}

let outcome;
try {
  await session("auto", "modern", "2026-07-28");
  await session("legacy", "legacy", "2025-11-25");
  outcome = { ok: true, error: null };
} catch (e) {
  outcome = { ok: false, error: String(e?.stack ?? e) };
}
const result = {
  client: "TypeScript SDK 2.x (@modelcontextprotocol/client, versionNegotiation auto and legacy)",
  version,
  framing: "ndjson",
  ...outcome,
  steps,
};
writeFileSync(resultPath, JSON.stringify(result, null, 2));
console.log(`${result.ok ? "PASS" : "FAIL"} ${result.client} ${version}: ${steps.map((s) => `${s.ok ? "✓" : "✗"} ${s.name}`).join(", ")}`);
if (!result.ok) console.error(result.error);
process.exit(result.ok ? 0 : 1);
