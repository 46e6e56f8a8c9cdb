/**
 * The authorization discovery an MCP client follows before it has a token, checked link by link:
 * the 401 challenge of the MCP endpoint names the protected resource metadata (RFC 9728 §5.1);
 * that document names the endpoint itself as `resource` (§3.3) and at least one authorization
 * server (the MCP authorization spec); each authorization server's metadata is found at the RFC
 * 8414 location or the OpenID one, names itself as `issuer` (RFC 8414 §3.3) and offers the
 * authorization code flow with PKCE S256, without which an MCP client must refuse to go on.
 * Requests to the target also go through the ordinary checks against its spec.
 */
import type { Target } from './cases.js';
import { send, type ConformanceRequest, type ConformanceResponse } from './http.js';
import type { CaseResult } from './report.js';
import { authorizationServerMetadataUrls } from '../ground/authorization-metadata.js';

type Check = (req: ConformanceRequest, res: ConformanceResponse | null, problems: string[]) => void;

interface Link {
  operationId: string;
  name: string;
  request: ConformanceRequest;
}

const get = (url: string): ConformanceRequest => ({ method: 'GET', url, headers: { accept: 'application/json' } });

function jsonOf(res: ConformanceResponse): Record<string, unknown> | null {
  try {
    const v = JSON.parse(res.body.toString('utf8')) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const isHttpUrl = (v: unknown): v is string => {
  if (typeof v !== 'string') return false;
  try {
    return ['http:', 'https:'].includes(new URL(v).protocol);
  } catch {
    return false;
  }
};

/**
 * Runs the discovery chain; `ordinary` applies the spec checks to answers from the target. The
 * operation ids are the target's where the request is the target's, else a name of the step.
 */
export async function authorizationDiscovery(
  target: Target, timeoutMs: number,
  ordinary: (req: ConformanceRequest, res: ConformanceResponse) => string[],
  operationFor: (url: string) => string | null,
): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  const step = async (link: Link, check: Check): Promise<ConformanceResponse | null> => {
    const problems: string[] = [];
    let res: ConformanceResponse | null = null;
    try {
      res = await send(link.request, timeoutMs);
      if (operationFor(link.request.url)) problems.push(...ordinary(link.request, res));
      check(link.request, res, problems);
    } catch (err) {
      problems.push(`answers: ${(err as Error).message}`);
    }
    results.push({ phase: 'mcp', api: 'dashboard', operationId: link.operationId, name: link.name, request: link.request, status: res?.status ?? null, problems });
    return problems.length ? null : res;
  };

  const endpoint = `${target.base}/api/v1/mcp`;
  let metadataUrl: string | null = null;
  await step({
    operationId: 'mcp.post', name: 'authorization: the challenge without a token names the resource metadata',
    request: {
      method: 'POST', url: endpoint,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    },
  }, (_req, res, problems) => {
    if (res!.status !== 401) return problems.push(`authorization: a request without a token must be answered 401, got ${res!.status}`);
    const challenge = res!.headers['www-authenticate'] ?? '';
    if (!/^Bearer\b/i.test(challenge)) return problems.push(`authorization: the 401 must carry a Bearer challenge, got WWW-Authenticate: ${challenge || '(none)'}`);
    const named = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    if (!isHttpUrl(named)) return problems.push('authorization: the Bearer challenge names no resource_metadata URL (RFC 9728 §5.1)');
    metadataUrl = named;
  });
  // A client without the challenge's URL tries the path-suffixed well-known location first (RFC 9728 §3.1).
  const prmUrl = metadataUrl ?? `${new URL(endpoint).origin}/.well-known/oauth-protected-resource${new URL(endpoint).pathname}`;

  const servers: string[] = [];
  await step({ operationId: operationFor(prmUrl) ?? 'protected resource metadata', name: 'authorization: the protected resource metadata names this endpoint and its authorization servers', request: get(prmUrl) }, (_req, res, problems) => {
    if (res!.status !== 200) return problems.push(`authorization: the protected resource metadata answered ${res!.status}`);
    const doc = jsonOf(res!);
    if (!doc) return problems.push('authorization: the protected resource metadata is not a JSON object');
    if (doc.resource !== endpoint) problems.push(`authorization: its resource is ${JSON.stringify(doc.resource)}, not this endpoint's URL ${endpoint} (RFC 9728 §3.3: a client must refuse it)`);
    const list = doc.authorization_servers;
    if (!Array.isArray(list) || !list.length) return problems.push('authorization: it names no authorization_servers (the MCP authorization spec requires at least one)');
    for (const s of list) {
      if (isHttpUrl(s)) servers.push(s);
      else problems.push(`authorization: ${JSON.stringify(s)} in authorization_servers is not an http(s) URL`);
    }
  });

  for (const issuer of servers) {
    let found = false;
    const urls = authorizationServerMetadataUrls(issuer);
    for (const [i, url] of urls.entries()) {
      if (found) break;
      await step({ operationId: operationFor(url) ?? 'authorization server metadata', name: `authorization: the metadata of ${issuer} at ${new URL(url).pathname}`, request: get(url) }, (_req, r, problems) => {
        // A later location is tried only when an earlier one is missing.
        if (r!.status === 404 && i < urls.length - 1) return;
        if (r!.status !== 200) return problems.push(`authorization: ${url} answered ${r!.status}`);
        const doc = jsonOf(r!);
        if (!doc) return problems.push(`authorization: ${url} is not a JSON object`);
        found = true;
        if (doc.issuer !== issuer) problems.push(`authorization: its issuer is ${JSON.stringify(doc.issuer)}, not ${issuer} (RFC 8414 §3.3: a client must refuse it)`);
        for (const k of ['authorization_endpoint', 'token_endpoint']) if (!isHttpUrl(doc[k])) problems.push(`authorization: it has no ${k}`);
        const types = doc.response_types_supported;
        if (!Array.isArray(types) || !types.includes('code')) problems.push('authorization: response_types_supported does not offer code');
        const pkce = doc.code_challenge_methods_supported;
        if (!Array.isArray(pkce) || !pkce.includes('S256')) problems.push('authorization: code_challenge_methods_supported does not offer S256 (an MCP client must refuse to go on without it)');
      });
    }
    if (!found && !results.some((r) => r.request.url.startsWith(new URL(issuer).origin) && r.problems.length)) {
      results.push({ phase: 'mcp', api: 'dashboard', operationId: 'authorization server metadata', name: `authorization: the metadata of ${issuer}`, request: get(urls[0]!), status: null, problems: [`authorization: neither the RFC 8414 nor the OpenID location of ${issuer} answers its metadata`] });
    }
  }
  return results;
}
