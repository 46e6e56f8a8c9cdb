/**
 * Talking to a connected service (compliance, branding, llm): an OAuth 2.0 client-credentials
 * token from {url}/api/v1/oauth/token, then bearer calls. Every step has a timeout, and error
 * text never carries the secret or the token. Connections go through the scans' guarded Agent:
 * the address actually connected to is checked (DNS rebinding), and redirects are refused, so the
 * secret never reaches a private address unless the operator allows it.
 */
import type { RequestInit as UndiciRequestInit } from 'undici';
import { undici } from '../scan/undici.js';
import { isIP } from 'node:net';
import { refusedRange, type AddressPolicy } from '../scan/address-policy.js';
import { BlockedAddressError, agentFor } from '../scan/guarded-agent.js';

/**
 * `policy` absent: private addresses refused (the safe default). `traceContext` writes the
 * caller's trace into a request's headers, so the connected service's spans join the caller's.
 */
export interface Credentials { url: string; clientId: string; clientSecret: string; policy?: AddressPolicy; traceContext?: (headers: Headers) => void }

/** The setting that opens private addresses to service calls; named in every refusal. */
export const OUTBOUND_PRIVATE_SETTING = 'OUTBOUND_ALLOW_PRIVATE_NETWORKS';

const REFUSE_PRIVATE: AddressPolicy = { allowPrivateNetworks: false };

/** fetch through the policy's Agent, never following a redirect. */
function guardedFetch(c: Credentials, url: string, init: RequestInit): Promise<Response> {
  // An IP literal skips the Agent's DNS lookup, so it is checked here.
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  const range = isIP(host) ? refusedRange(host, c.policy ?? REFUSE_PRIVATE) : null;
  if (range) return Promise.reject(new BlockedAddressError(host, host, range));
  // The caller's trace goes on to the connected service (scanned sites never get it).
  const headers = new Headers(init.headers);
  c.traceContext?.(headers);
  const options = { ...(init as UndiciRequestInit), headers: Object.fromEntries(headers), redirect: 'error', dispatcher: agentFor(c.policy ?? REFUSE_PRIVATE) } as UndiciRequestInit;
  return undici().fetch(url, options) as unknown as Promise<Response>;
}

export class ServiceCallError extends Error {
  constructor(readonly step: 'oauth' | 'health' | 'call', message: string) {
    super(message);
  }
}

export const endpoint = (base: string, path: string) => new URL(path, base.endsWith('/') ? base : `${base}/`).href;

export function scrub(text: string, secrets: (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 3) out = out.split(s).join('[redacted]');
  return out;
}

function describe(err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  const blocked = blockedCause(err);
  if (blocked) return `${blocked.message}; calls to private networks are refused (an operator can allow them with ${OUTBOUND_PRIVATE_SETTING}=true)`;
  if (/redirect/i.test(e.message) || /redirect/i.test(e.cause?.message ?? '')) return 'the service answered with a redirect, which is not followed';
  return e.cause?.code ?? e.cause?.message ?? e.message;
}

function blockedCause(err: unknown): BlockedAddressError | null {
  for (let e = err as { cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e instanceof BlockedAddressError) return e;
  }
  return null;
}

export async function requestToken(c: Credentials, timeoutMs: number): Promise<string> {
  let res: Response;
  try {
    res = await guardedFetch(c, endpoint(c.url, 'api/v1/oauth/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret }),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (err) {
    throw new ServiceCallError('oauth', scrub(`token request failed: ${describe(err, timeoutMs)}`, [c.clientSecret]));
  }
  const text = await res.text().catch(() => '');
  if (!res.ok) throw new ServiceCallError('oauth', scrub(`token endpoint answered ${res.status} ${res.statusText}`.trim(), [c.clientSecret]));
  let token: unknown;
  try {
    token = (JSON.parse(text) as { access_token?: unknown }).access_token;
  } catch {
    /* handled below */
  }
  if (typeof token !== 'string' || !token) throw new ServiceCallError('oauth', 'token endpoint answered without an access_token');
  return token;
}

export async function callService(c: Credentials, token: string, path: string, init: RequestInit & { timeoutMs: number; step?: 'health' | 'call' }) {
  const { timeoutMs, step = 'call', ...rest } = init;
  try {
    return await guardedFetch(c, endpoint(c.url, path), {
      ...rest,
      headers: { accept: 'application/json', ...(rest.headers as Record<string, string>), authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (err) {
    throw new ServiceCallError(step, scrub(`${path} failed: ${describe(err, timeoutMs)}`, [c.clientSecret, token]));
  }
}

export type ConnectionTest = { ok: true; latencyMs: number } | { ok: false; step: 'oauth' | 'health'; error: string; latencyMs: number };

/** Token, then GET {url}/api/v1/health with it. */
export async function testConnection(c: Credentials, timeoutMs = 10_000): Promise<ConnectionTest> {
  const started = performance.now();
  const latencyMs = () => Math.round(performance.now() - started);
  try {
    const token = await requestToken(c, timeoutMs);
    const res = await callService(c, token, 'api/v1/health', { method: 'GET', timeoutMs, step: 'health' });
    await res.body?.cancel();
    if (!res.ok) return { ok: false, step: 'health', error: `health endpoint answered ${res.status} ${res.statusText}`.trim(), latencyMs: latencyMs() };
    return { ok: true, latencyMs: latencyMs() };
  } catch (err) {
    if (err instanceof ServiceCallError && err.step !== 'call') return { ok: false, step: err.step, error: err.message, latencyMs: latencyMs() };
    throw err;
  }
}
