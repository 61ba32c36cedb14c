// The official TypeScript SDK client (Client + StdioClientTransport, the stack Claude Code and
// Cursor use) against mcp-echo-server. Usage: node ts_client.mjs SERVER RESULT_JSON
// Exits 0 when every step gave exactly the expected result.
import { readFileSync, writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [server, resultPath] = process.argv.slice(2);
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
  const transport = new StdioClientTransport({ command: server, args: [], stderr: "pipe" });
  const client = new Client({ name: "interop-ts", version: "1.0.0" });
  await client.connect(transport);
  const info = client.getServerVersion();
  expect("initialize", info?.name === "mcp-echo-server", JSON.stringify(info));

  const { tools } = await client.listTools();
  expect("tools/list", tools.length === 1 && tools[0].name === "echo", JSON.stringify(tools.map((t) => t.name)));

  for (const [label, text] of [
    ["echo ascii", "hello from the TypeScript SDK"],
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

  // close(): stdin.end(), then SIGTERM after 2 s. Our server must exit on EOF by itself.
  const child = transport._process;
  const started = Date.now();
  await client.close();
  const waited = Date.now() - started;
  await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", resolve)));
  expect(
    "close without a signal",
    child.exitCode === 0 && child.signalCode === null && waited < 1900,
    `exit code ${child.exitCode}, signal ${child.signalCode}, close took ${waited} ms`,
  );
  outcome = { ok: true, error: null };
} catch (e) {
  outcome = { ok: false, error: String(e?.stack ?? e) };
}
const result = {
  client: "TypeScript SDK (@modelcontextprotocol/sdk)",
  version: sdkVersion,
  framing: "ndjson",
  ...outcome,
  steps,
};
writeFileSync(resultPath, JSON.stringify(result, null, 2));
console.log(`${result.ok ? "PASS" : "FAIL"} ${result.client} ${result.version}: ${steps.map((s) => `${s.ok ? "✓" : "✗"} ${s.name}`).join(", ")}`);
if (!result.ok) console.error(result.error);
process.exit(result.ok ? 0 : 1);
