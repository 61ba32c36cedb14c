// Streamable HTTP echo server on the official TypeScript SDK (@modelcontextprotocol/sdk 1.32.2,
// pinned in interop/package-lock.json and installed there by bench/setup.sh), for
// bench/compare.sh --http. One tool, `echo` {text: string} -> the text as one text content block.
//
// As the SDK documents stateful serving: node's `http` module (no express), one
// McpServer + StreamableHTTPServerTransport per session (sessionIdGenerator: randomUUID),
// looked up by the Mcp-Session-Id header; an `initialize` without one starts a session.
// enableJsonResponse: replies are application/json, not SSE streams.
// Known SDK leak (1.32.2): in JSON-response mode a request's `_streamMapping` entry is never
// removed (webStandardStreamableHttp.js resolves the JSON reply without calling cleanup()), so
// the entry, its pending promise and what it holds stay for the session's life: one entry per
// request (counted: 2992 after 3000 calls), about 40 KB each with 16 KiB texts; node dies of
// --max-old-space-size=200 after ~5000 such requests. Peak RSS here grows with --calls.
//
//   node ts_http_echo_server.mjs [PORT]      (or PORT=...; default 8000; 0: any free port)
//
// Listens on 127.0.0.1 and prints `listening on http://127.0.0.1:PORT/mcp` on stderr once bound.
// Imports by relative path into interop/node_modules (ESM ignores NODE_PATH), so no second install.
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer } from "../../interop/node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.js";
import { StreamableHTTPServerTransport } from "../../interop/node_modules/@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js";
import { isInitializeRequest } from "../../interop/node_modules/@modelcontextprotocol/sdk/dist/esm/types.js";
import { z } from "../../interop/node_modules/zod/index.js";

const port = Number(process.argv[2] ?? process.env.PORT ?? 8000);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`ts_http_echo_server: bad port ${process.argv[2] ?? process.env.PORT}`);
  process.exit(2);
}

function echoServer() {
  const server = new McpServer({ name: "ts-http-echo", version: "1.0.0" });
  server.registerTool(
    "echo",
    {
      description: "Echo the given text back as a text content block",
      inputSchema: { text: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  return server;
}

/** Live sessions: Mcp-Session-Id -> transport. */
const transports = new Map();

function reply(res, status, message) {
  res.writeHead(status, { "content-type": "application/json" }).end(
    JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }),
  );
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

const http = createServer(async (req, res) => {
  try {
    if (new URL(req.url, "http://x").pathname !== "/mcp") return reply(res, 404, "not found");
    const sid = req.headers["mcp-session-id"];
    const known = typeof sid === "string" ? transports.get(sid) : undefined;
    if (req.method !== "POST") {
      // GET (server-to-client stream) and DELETE (end the session) on a known session.
      if (!known) return reply(res, sid ? 404 : 400, "no valid session id");
      return await known.handleRequest(req, res);
    }
    let body;
    try {
      body = await readJson(req);
    } catch {
      return reply(res, 400, "parse error");
    }
    if (known) return await known.handleRequest(req, res, body);
    if (sid) return reply(res, 404, "session not found");
    if (!isInitializeRequest(body)) return reply(res, 400, "no session id, and not an initialize request");
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
    };
    await echoServer().connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (e) {
    console.error("ts_http_echo_server:", e);
    if (!res.headersSent) reply(res, 500, "internal error");
  }
});

http.keepAliveTimeout = 120_000;
http.listen(port, "127.0.0.1", () => {
  console.error(`listening on http://127.0.0.1:${http.address().port}/mcp`);
});
