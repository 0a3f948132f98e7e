// A server on the official TypeScript SDK (a real server others wrote the protocol side of),
// for what the Python SDK cannot be made to send:
//
// - `surrogate` returns text holding a lone surrogate: JavaScript strings may, and
//   JSON.stringify writes it as the escape "\ud800", which Python decodes to an unencodable str
//   (the Python SDK fails to encode one);
// - `noise` writes to stdout with console.log, as a stdio server's debugging often does (the
//   Python SDK sends stdout to stderr), a line of terminal control sequences that is not JSON,
//   and an id-less JSON-RPC error carrying them.
//
//     node hostile_ts_server.mjs      # stdio
const sdk = new URL("../peers/node_modules/@modelcontextprotocol/sdk/dist/esm/", import.meta.url);
const { McpServer } = await import(new URL("server/mcp.js", sdk));
const { StdioServerTransport } = await import(new URL("server/stdio.js", sdk));

const HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[8mhidden\rfake$ ok\x9b31m\u202eevil\u200b\u{e0041}";

const server = new McpServer({ name: "hostile-ts", version: "1.0.0" });
server.registerTool(
  "surrogate",
  { description: "Returns text with a lone surrogate." },
  async () => ({ content: [{ type: "text", text: "lone \ud800 surrogate" }] }),
);
server.registerTool(
  "noise",
  { description: "Prints to stdout, then answers." },
  async () => {
    console.log(`debug ${HOSTILE}`);
    console.log(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -1, message: HOSTILE } }));
    return { content: [{ type: "text", text: "done" }] };
  },
);
await server.connect(new StdioServerTransport());
