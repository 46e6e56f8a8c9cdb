/**
 * The compliance service, when an org has connected one: regulations and proposals come from it
 * (client-credentials token, then GET {url}/api/v1/regulations, /regulations/{id}, /proposals,
 * /proposals/{id}), checked against the same schemas as ours. Anything that fails — timeout,
 * error status, a body the schema refuses — falls back to the embedded data set, and says so.
 */
import type { Credentials } from './client.js';
import { ServiceCallError, callService, requestToken } from './client.js';

export interface Validator { (data: unknown): boolean }

/** Tokens by service and client, until shortly before they expire (client credentials are cheap to reuse). */
const tokens = new Map<string, { token: string; until: number }>();

async function token(c: Credentials, timeoutMs: number): Promise<string> {
  const key = `${c.url}\0${c.clientId}\0${c.clientSecret}`;
  const hit = tokens.get(key);
  if (hit && hit.until > Date.now()) return hit.token;
  const fresh = await requestToken(c, timeoutMs);
  if (tokens.size > 1000) tokens.clear();
  tokens.set(key, { token: fresh, until: Date.now() + 5 * 60_000 });
  return fresh;
}

export type Fetched<T> = { ok: true; value: T } | { ok: false; notFound: boolean; reason: string };

/** GET a path of the compliance service and check the body; a 404 is reported as such. */
export async function fetchCompliance<T>(c: Credentials, path: string, validate: Validator, timeoutMs: number): Promise<Fetched<T>> {
  try {
    const res = await callService(c, await token(c, timeoutMs), path, { method: 'GET', timeoutMs });
    if (res.status === 404) {
      await res.body?.cancel();
      return { ok: false, notFound: true, reason: `${path} answered 404` };
    }
    if (!res.ok) {
      await res.body?.cancel();
      return { ok: false, notFound: false, reason: `${path} answered ${res.status}` };
    }
    const body = (await res.json()) as unknown;
    if (!validate(body)) return { ok: false, notFound: false, reason: `${path} answered a body that does not match the schema` };
    return { ok: true, value: body as T };
  } catch (err) {
    return { ok: false, notFound: false, reason: err instanceof ServiceCallError ? err.message : (err as Error).message };
  }
}
