// The TypeScript SDK 2.x client (@modelcontextprotocol/client, versionNegotiation "auto": it
// probes server/discover and falls back to initialize), as `mcp-conformance client` runs it:
// the last argument is the server (a relay executable over stdio, a URL over HTTP).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const target = process.argv.at(-1);
const transport = /^https?:/.test(target)
  ? new StreamableHTTPClientTransport(new URL(target))
  : new StdioClientTransport({ command: target, args: [], stderr: "inherit" });
const client = new Client(
  { name: "judged-ts-sdk2", version: "1.0.0" },
  {
    capabilities: { roots: {}, sampling: {}, elicitation: {} },
    versionNegotiation: { mode: "auto", probe: { timeoutMs: 3000 } },
  },
);
client.setRequestHandler("roots/list", async () => ({ roots: [{ uri: "file:///tmp", name: "tmp" }] }));
client.setRequestHandler("sampling/createMessage", async () => ({
  role: "assistant", content: { type: "text", text: "hi" }, model: "judged",
}));
client.setRequestHandler("elicitation/create", async () => ({ action: "decline" }));
try {
  await client.connect(transport);
  await client.listTools();
  await client.callTool({ name: "add_numbers", arguments: { a: 1, b: 2 } }, { timeout: 2000 });
} catch (e) {
  console.error(`judged-ts-sdk2: ${e.message}`);
  // As an application would: go on for a moment before closing, so what the SDK sends when it
  // gives up on a request (notifications/cancelled) is not cut off by the close.
  await new Promise((resolve) => setTimeout(resolve, 300));
} finally {
  await client.close();
}
