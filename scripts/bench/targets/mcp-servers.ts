/**
 * Benchmark targets for scripts/bench/mcp.ts, one per process:
 *   sdk     the bare MCP SDK built the fast way it allows: node:http, a McpServer per request
 *           (the SDK forbids sharing one across concurrent connects) with one trivial tool, all
 *           of them sharing one AjvJsonSchemaValidator (compiling a validator per request is the
 *           slow way), a stateless StreamableHTTPServerTransport per request with JSON responses.
 *           No auth, no database, no logging.
 * (pactum itself runs as `pactum serve` from dist/: see ../mcp.ts and ../pactum-process.ts)
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';

if (process.argv[2] === 'sdk') {
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const mcp = new McpServer({ name: 'bare', version: '1.0.0' }, { jsonSchemaValidator });
    mcp.registerTool('echo', { description: 'echo', inputSchema: { text: z.string() } }, ({ text }) => Promise.resolve({ content: [{ type: 'text' as const, text }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8')));
  };
  const server = createServer((req, res) => void handle(req, res)).listen(0, '127.0.0.1', () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    process.send!({ url, body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hello' } } }, headers: {} });
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
