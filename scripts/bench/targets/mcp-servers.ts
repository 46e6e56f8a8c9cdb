/**
 * Benchmark targets for scripts/bench/mcp.ts, one per process:
 *   sdk     the bare MCP SDK (v2, @modelcontextprotocol/server, as pactum's endpoint) built the
 *           fastest way it allows, serving both revisions on one URL with one tool (pactum's dashboard_get_org
 *           without the database: the same arguments, the same result, input and output schemas):
 *           node:http; the body read and parsed once and handed to the SDK as `parsedBody` (its
 *           escape hatch that skips a second read and parse); a fresh McpServer per request (the
 *           SDK's factory contract) with that tool, all of them sharing one
 *           AjvJsonSchemaValidator (compiling one per request is the slow way).
 *           - 2026-07-28 (the version in `params._meta`): the SDK's `createMcpHandler`, modern only
 *             (`legacy: 'reject'`), answers in JSON unless the tool reports progress.
 *           - 2025-11-25 (the SDK's `isLegacyRequest` says so): a stateless
 *             WebStandardStreamableHTTPServerTransport per request with JSON responses, as pactum
 *             answers (the handler's own stateless fallback answers in SSE).
 *           A McpServer with a validated input costs about what a low-level Server does once warm,
 *           and is how the SDK means a tool to be written.
 *           The same bearer check as pactum's: the SDK's verifyBearerToken with a verifier that
 *           checks an HS256 JWT with jose (audience, issuer, `exp` required), each verified token
 *           kept until its expiry (at most five minutes) as pactum keeps them, so that a call with a
 *           known token costs a lookup, as it does in pactum; the token (an hour) comes with the
 *           target's URL. The SDK's McpServer cannot be reused across requests when stateless (a
 *           2026-07-28 handler refuses a server already serving; a transport connects once), so
 *           one is built per request.
 *           No database, no logging.
 * (pactum itself runs as `pactum serve` from dist/: see ../mcp.ts and ../pactum-process.ts)
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSecretKey, randomBytes } from 'node:crypto';
import { bearerAuthChallengeResponse, createMcpHandler, isLegacyRequest, McpServer, OAuthError, OAuthErrorCode, verifyBearerToken, WebStandardStreamableHTTPServerTransport, type AuthInfo } from '@modelcontextprotocol/server';
import { jwtVerify, SignJWT } from 'jose';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { z } from 'zod';

/** The headers the SDK reads; the rest of an incoming request's headers it does not need. */
const FORWARDED = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name'];

if (process.argv[2] === 'sdk') {
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  // pactum's dashboard_get_org without its database: the same arguments and result, both schemas checked.
  const getOrgInput = z.object({ targetOrgId: z.string().min(1).max(64) });
  const org = z.object({ id: z.string(), name: z.string(), slug: z.string(), createdAt: z.string(), updatedAt: z.string() });
  const now = new Date().toISOString();
  const row = (id: string) => ({ id, name: 'bench', slug: 'bench', createdAt: now, updatedAt: now });
  const bare = () => {
    const mcp = new McpServer({ name: 'bare', version: '1.0.0' }, { capabilities: { tools: {} }, jsonSchemaValidator });
    mcp.registerTool('get_org', { description: 'An organization', inputSchema: getOrgInput, outputSchema: org }, ({ targetOrgId }) => {
      const structuredContent = row(targetOrgId);
      return Promise.resolve({ content: [{ type: 'text' as const, text: JSON.stringify(structuredContent) }], structuredContent });
    });
    return mcp;
  };
  const modern = createMcpHandler(bare, { legacy: 'reject' });

  const key = createSecretKey(randomBytes(32));
  const audience = 'http://127.0.0.1/mcp';
  const issuer = 'bare';
  const verified = new Map<string, { auth: AuthInfo; until: number }>();
  const verifier = {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const known = verified.get(token);
      if (known && Date.now() < known.until) return known.auth;
      const { payload } = await jwtVerify(token, key, { audience, issuer, algorithms: ['HS256'], requiredClaims: ['exp'], clockTolerance: 5 }).catch((err: Error) => {
        throw new OAuthError(OAuthErrorCode.InvalidToken, err.message);
      });
      const auth: AuthInfo = { token, clientId: payload.sub!, scopes: [], expiresAt: payload.exp! };
      if (verified.size >= 10_000) verified.delete(verified.keys().next().value!);
      verified.set(token, { auth, until: Math.min(payload.exp! * 1000, Date.now() + 5 * 60_000) });
      return auth;
    },
  };
  const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject('bench').setAudience(audience).setIssuer(issuer).setIssuedAt().setExpirationTime('1h').sign(key);

  async function answer(request: Request, body: unknown, authorization: string | undefined): Promise<Response> {
    let authInfo: AuthInfo;
    try {
      authInfo = await verifyBearerToken(authorization, { verifier });
    } catch (err) {
      return bearerAuthChallengeResponse(err);
    }
    if (!(await isLegacyRequest(request, body))) return modern.fetch(request, { parsedBody: body, authInfo });
    const mcp = bare();
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await mcp.connect(transport);
    return transport.handleRequest(request, { parsedBody: body, authInfo });
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
    const response = await answer(new Request(`http://${req.headers.host}${req.url}`, { method: 'POST', headers }), body, req.headers.authorization);
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => (out[name] = value));
    res.writeHead(response.status, out).end(await response.text());
  };
  const server = createServer((req, res) => void handle(req, res)).listen(0, '127.0.0.1', () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    process.send!({ url, tool: 'get_org', arguments: { targetOrgId: 'org_01m98tftbjc18pwnwsh5hpqrcv' }, token });
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
