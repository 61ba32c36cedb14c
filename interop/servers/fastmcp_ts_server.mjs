// A small server on FastMCP for TypeScript (npm `fastmcp`), over stdio, for the interop suite:
// mcp-conformance runs against it.
import { FastMCP } from "fastmcp";
import { z } from "zod";

const server = new FastMCP({ name: "interop-fastmcp-ts", version: "0.0.1" });
server.addTool({
  name: "add",
  description: "Add two numbers",
  parameters: z.object({ a: z.number(), b: z.number() }),
  annotations: { readOnlyHint: true },
  execute: async (args) => String(args.a + args.b),
});
server.addTool({
  name: "echo",
  description: "Echo text back",
  parameters: z.object({ text: z.string() }),
  execute: async (args) => args.text,
});
server.start({ transportType: "stdio" });
