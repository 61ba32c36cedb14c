// Echo server on the official TypeScript SDK (@modelcontextprotocol/sdk 1.32.2, pinned in
// interop/package-lock.json and installed there by bench/setup.sh), for bench/compare.sh.
// One tool, `echo` {text: string} -> the text as one text content block. Stdio transport.
// Imports by relative path into interop/node_modules (ESM ignores NODE_PATH), so no second install.
import { McpServer } from "../../interop/node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.js";
import { StdioServerTransport } from "../../interop/node_modules/@modelcontextprotocol/sdk/dist/esm/server/stdio.js";
import { z } from "../../interop/node_modules/zod/index.js";

const server = new McpServer({ name: "ts-echo", version: "1.0.0" });

server.registerTool(
  "echo",
  {
    description: "Echo the given text back as a text content block",
    inputSchema: { text: z.string() },
    annotations: { readOnlyHint: true },
  },
  async ({ text }) => ({ content: [{ type: "text", text }] }),
);

await server.connect(new StdioServerTransport());
