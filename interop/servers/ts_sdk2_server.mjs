// A small server on the TypeScript SDK 2.x (@modelcontextprotocol/server), over stdio in both eras
// (serveStdio), for the interop suite: mcp-conformance runs against it.
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

serveStdio(() => {
  const server = new McpServer({ name: "interop-ts-sdk2", version: "0.0.1" }, { capabilities: { tools: {} } });
  server.registerTool("add", {
    title: "Add",
    description: "Add two numbers",
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    annotations: { readOnlyHint: true },
  }, async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
  server.registerTool("echo", {
    description: "Echo text back",
    inputSchema: z.object({ text: z.string() }),
  }, async ({ text }) => ({ content: [{ type: "text", text }] }));
  return server;
});
