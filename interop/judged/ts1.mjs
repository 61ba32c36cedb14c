// The TypeScript SDK 1.x client (Client + StdioClientTransport or StreamableHTTPClientTransport,
// the stack Claude Code and Cursor use), as `mcp-conformance client` runs it: the last argument is
// the server (a relay executable over stdio, a URL over HTTP). It declares roots, sampling and
// elicitation, answers them, lists tools, calls add_numbers (2 s timeout), and closes.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const target = process.argv.at(-1);
const transport = /^https?:/.test(target)
  ? new StreamableHTTPClientTransport(new URL(target))
  : new StdioClientTransport({ command: target, args: [], stderr: "inherit" });
const client = new Client(
  { name: "judged-ts-sdk1", version: "1.0.0" },
  { capabilities: { roots: {}, sampling: {}, elicitation: {} } },
);
client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///tmp", name: "tmp" }] }));
client.setRequestHandler(CreateMessageRequestSchema, async () => ({
  role: "assistant", content: { type: "text", text: "hi" }, model: "judged",
}));
client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
try {
  await client.connect(transport);
  await client.listTools();
  await client.callTool({ name: "add_numbers", arguments: { a: 1, b: 2 } }, undefined, { timeout: 2000 });
} catch (e) {
  console.error(`judged-ts-sdk1: ${e.message}`);
  // As an application would: go on for a moment before closing, so what the SDK sends when it
  // gives up on a request (notifications/cancelled) is not cut off by the close.
  await new Promise((resolve) => setTimeout(resolve, 300));
} finally {
  await client.close();
}
