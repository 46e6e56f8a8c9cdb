/**
 * Talking to a connected service (compliance, branding, llm): an OAuth 2.0 client-credentials
 * token from {url}/api/v1/oauth/token, then bearer calls. Every step has a timeout, and error
 * text never carries the secret or the token.
 */
export interface Credentials { url: string; clientId: string; clientSecret: string }

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
  return e.cause?.code ?? e.cause?.message ?? e.message;
}

export async function requestToken(c: Credentials, timeoutMs: number): Promise<string> {
  let res: Response;
  try {
    res = await fetch(endpoint(c.url, 'api/v1/oauth/token'), {
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
    return await fetch(endpoint(c.url, path), {
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
