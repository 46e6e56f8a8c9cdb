/**
 * Before any check: is the target there, which API does it serve, and does it accept the
 * credentials it was given? A run against a dead target or with a refused token would otherwise
 * report hundreds of failures that all say the same thing; this says it once.
 */
import type { ApiName } from '../../generated/operations.js';
import { send, type ConformanceRequest, type ConformanceResponse } from './http.js';

/** What stops a run before it starts: one line, for a person to act on. */
export class TargetProblem extends Error {}

export interface TargetFacts {
  /** The target says it keeps no state (the pactum mock): writes leave nothing behind. */
  stateless: boolean;
  /** The one API a pactum mock port serves, from its X-Pactum-Mock header. */
  mockApi: ApiName | null;
}

const API_NAMES: readonly ApiName[] = ['dashboard', 'legacy', 'batch'];

/** The message of an error answer: the API's error shape, an OAuth challenge, else the status. */
function reasonOf(res: ConformanceResponse): string {
  try {
    const body = JSON.parse(res.body.toString('utf8')) as { message?: unknown; error?: unknown };
    if (typeof body.message === 'string') return body.message;
    if (typeof body.error === 'string') return body.error;
  } catch {
    // not JSON: the challenge or the status says enough
  }
  const challenge = /error_description="([^"]*)"/.exec(res.headers['www-authenticate'] ?? '')?.[1];
  return challenge ?? `HTTP ${res.status}`;
}

function causeOf(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return 'no answer within the timeout';
  return e.cause?.code ?? e.cause?.message ?? e.message;
}

/** The target's /healthz (or the error that kept it from answering). */
export async function reachTarget(base: string, timeoutMs: number): Promise<ConformanceResponse> {
  try {
    return await send({ method: 'GET', url: `${base}/healthz`, headers: { accept: 'application/json' } }, timeoutMs);
  } catch (err) {
    throw new TargetProblem(`cannot reach ${base}: ${causeOf(err)} (is the server running, and is --target its base URL?)`);
  }
}

export function factsOf(health: ConformanceResponse): TargetFacts {
  const mock = health.headers['x-pactum-mock'] ?? '';
  const api = /api=(\w+)/.exec(mock)?.[1] as ApiName | undefined;
  return { stateless: mock.includes('stateless'), mockApi: api && API_NAMES.includes(api) ? api : null };
}

/** A server (not a single-API mock port) must answer its liveness check. */
export function checkHealth(base: string, health: ConformanceResponse, facts: TargetFacts): void {
  if (facts.mockApi && facts.mockApi !== 'dashboard') return; // an object-API port has no /healthz
  if (health.status !== 200) throw new TargetProblem(`${base}/healthz answered ${health.status} (${reasonOf(health)}): the target is not a healthy pactum server`);
}

/** The bearer token against the MCP endpoint: refused means every MCP check would fail alike. */
export async function checkToken(base: string, token: string, timeoutMs: number): Promise<void> {
  const res = await send({
    method: 'POST',
    url: `${base}/api/v1/mcp`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }),
  }, timeoutMs).catch((err: unknown) => {
    throw new TargetProblem(`cannot reach ${base}/api/v1/mcp: ${causeOf(err)}`);
  });
  if (res.status === 401 || res.status === 403) throw new TargetProblem(`the target refuses --token (${res.status}: ${reasonOf(res)}); make a token for this server, e.g. pactum token --user <name>`);
}

/** The Basic credentials against the repository's object API. */
export async function checkBasic(base: string, repo: string, basic: string, apis: readonly ApiName[], timeoutMs: number): Promise<void> {
  const lfs = `${base}/${repo.split('/').map(encodeURIComponent).join('/')}.git/info/lfs`;
  const authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
  const accept = 'application/vnd.git-lfs+json';
  const request: ConformanceRequest = apis.includes('batch')
    ? { method: 'POST', url: `${lfs}/objects/batch`, headers: { authorization, accept, 'content-type': accept }, body: JSON.stringify({ operation: 'download', objects: [{ oid: '0'.repeat(64), size: 1 }] }) }
    : { method: 'GET', url: `${lfs}/objects/${'0'.repeat(64)}`, headers: { authorization, accept } };
  const res = await send(request, timeoutMs).catch((err: unknown) => {
    throw new TargetProblem(`cannot reach ${lfs}: ${causeOf(err)}`);
  });
  const user = basic.split(':')[0];
  if (res.status === 401 || res.status === 403) throw new TargetProblem(`the target refuses --basic for ${user} on ${repo} (${res.status}: ${reasonOf(res)})`);
  if (res.status === 404 && apis.includes('batch')) throw new TargetProblem(`the target has no repository ${repo} that ${user} can see (404: ${reasonOf(res)}); name one with --repo org/repo`);
}
