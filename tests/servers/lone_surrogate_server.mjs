// A server on the official TypeScript SDK (a real server others wrote the protocol side of) whose
// tool `surrogate` returns text holding a lone surrogate: JavaScript strings may, and
// JSON.stringify writes it as the escape "\ud800", which Python decodes to an unencodable str.
// (The Python SDK cannot send one: it fails to encode it.)
//
//     node lone_surrogate_server.mjs      # stdio
const sdk = new URL("../peers/node_modules/@modelcontextprotocol/sdk/dist/esm/", import.meta.url);
const { McpServer } = await import(new URL("server/mcp.js", sdk));
const { StdioServerTransport } = await import(new URL("server/stdio.js", sdk));

const server = new McpServer({ name: "lone-surrogate", version: "1.0.0" });
server.registerTool(
  "surrogate",
  { description: "Returns text with a lone surrogate." },
  async () => ({ content: [{ type: "text", text: "lone \ud800 surrogate" }] }),
);
await server.connect(new StdioServerTransport());
