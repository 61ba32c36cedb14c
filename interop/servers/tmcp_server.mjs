// A small server on tmcp (an independent TypeScript MCP SDK) with @tmcp/transport-stdio, for the
// interop suite: mcp-conformance runs against it.
import { McpServer } from "tmcp";
import { StdioTransport } from "@tmcp/transport-stdio";
import { ZodJsonSchemaAdapter } from "@tmcp/adapter-zod";
import { z } from "zod";

const server = new McpServer(
  { name: "interop-tmcp", version: "0.0.1", description: "tmcp example for the interop suite" },
  { adapter: new ZodJsonSchemaAdapter(), capabilities: { tools: { listChanged: true } } },
);
server.tool(
  {
    name: "add",
    description: "Add two numbers",
    schema: z.object({ a: z.number(), b: z.number() }),
    annotations: { readOnlyHint: true },
  },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
);
server.tool(
  { name: "echo", description: "Echo text back", schema: z.object({ text: z.string() }) },
  async ({ text }) => ({ content: [{ type: "text", text }] }),
);
new StdioTransport(server).listen();
