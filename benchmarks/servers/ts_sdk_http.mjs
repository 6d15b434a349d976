// The official TypeScript SDK's echo server over Streamable HTTP (express, stateful: one
// transport and McpServer per session), for benchmarks/http_bench.py. The benchmark copies
// this file into its npm cache folder, where @modelcontextprotocol/sdk resolves.
//   node ts_sdk_http.mjs PORT
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const sessions = new Map();

function echoServer() {
  const server = new McpServer({ name: 'ts-echo', version: '1.0.0' });
  server.registerTool('echo', { description: 'Return the text unchanged', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
}

const app = createMcpExpressApp();

app.post('/mcp', async (req, res) => {
  const id = req.headers['mcp-session-id'];
  let transport = id ? sessions.get(id) : undefined;
  if (!transport) {
    if (id || !isInitializeRequest(req.body)) {
      res.status(404).json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => sessions.set(sid, transport),
    });
    transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
    await echoServer().connect(transport);
  }
  await transport.handleRequest(req, res, req.body);
});

for (const method of ['get', 'delete']) {
  app[method]('/mcp', async (req, res) => {
    const transport = sessions.get(req.headers['mcp-session-id']);
    if (!transport) { res.status(404).end(); return; }
    await transport.handleRequest(req, res);
  });
}

app.listen(Number(process.argv[2]), '127.0.0.1');
