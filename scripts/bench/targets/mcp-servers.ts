/**
 * Benchmark targets for scripts/bench/mcp.ts, one per process:
 *   sdk     the bare MCP SDK (v2, @modelcontextprotocol/server, as pactum's endpoint) built the
 *           fastest way it allows, serving both revisions on one URL with one trivial tool:
 *           node:http; the body read and parsed once and handed to the SDK as `parsedBody` (its
 *           escape hatch that skips a second read and parse); a fresh McpServer per request (the
 *           SDK's factory contract) with the `echo` tool, all of them sharing one
 *           AjvJsonSchemaValidator (compiling one per request is the slow way).
 *           - 2026-07-28 (the version in `params._meta`): the SDK's `createMcpHandler`, modern only
 *             (`legacy: 'reject'`), answers in JSON unless the tool reports progress.
 *           - 2025-11-25 (the SDK's `isLegacyRequest` says so): a stateless
 *             WebStandardStreamableHTTPServerTransport per request with JSON responses, as pactum
 *             answers (the handler's own stateless fallback answers in SSE).
 *           A McpServer with a validated input costs about what a low-level Server does once warm,
 *           and is how the SDK means one trivial tool to be written.
 *           No auth, no database, no logging.
 * (pactum itself runs as `pactum serve` from dist/: see ../mcp.ts and ../pactum-process.ts)
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, isLegacyRequest, McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { z } from 'zod';

/** The headers the SDK reads; the rest of an incoming request's headers it does not need. */
const FORWARDED = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name'];

if (process.argv[2] === 'sdk') {
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const echoInput = z.object({ text: z.string() });
  const bare = () => {
    const mcp = new McpServer({ name: 'bare', version: '1.0.0' }, { capabilities: { tools: {} }, jsonSchemaValidator });
    mcp.registerTool('echo', { description: 'echo', inputSchema: echoInput }, ({ text }) => Promise.resolve({ content: [{ type: 'text' as const, text }] }));
    return mcp;
  };
  const modern = createMcpHandler(bare, { legacy: 'reject' });

  async function answer(request: Request, body: unknown): Promise<Response> {
    if (!(await isLegacyRequest(request, body))) return modern.fetch(request, { parsedBody: body });
    const mcp = bare();
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await mcp.connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    const headers = new Headers();
    for (const name of FORWARDED) {
      const value = req.headers[name];
      if (typeof value === 'string') headers.set(name, value);
    }
    const response = await answer(new Request(`http://${req.headers.host}${req.url}`, { method: 'POST', headers }), body);
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => (out[name] = value));
    res.writeHead(response.status, out).end(await response.text());
  };
  const server = createServer((req, res) => void handle(req, res)).listen(0, '127.0.0.1', () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    process.send!({ url, tool: 'echo', arguments: { text: 'hello' } });
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
