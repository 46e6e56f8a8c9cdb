/**
 * Every request a page makes in Chromium is intercepted and made here instead, through the same
 * guarded connection as the page itself (guarded-agent.ts): the address policy is checked on the
 * address actually connected to, for images, scripts, styles, frames, fonts, media and XHR alike.
 * Redirects go back to the browser as they are, so each hop is intercepted and checked again.
 */
import { undici } from '../undici.js';
import { refusedRange, describeRange, type AddressPolicy } from '../address-policy.js';
import { agentFor, BlockedAddressError } from '../guarded-agent.js';
import { isIP } from 'node:net';

export interface Subresource {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export type SubresourceOutcome = { ok: true; response: Subresource } | { ok: false; blocked: boolean; why: string };

/** Response headers passed on to the browser; the rest (cookies, hop-by-hop, encodings undici did not undo) are dropped. */
const PASSED_HEADERS = ['content-type', 'location', 'cache-control', 'last-modified', 'etag', 'content-language', 'access-control-allow-origin', 'access-control-allow-credentials', 'timing-allow-origin'];

export interface SubresourceOptions {
  policy: AddressPolicy;
  userAgent: string;
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
}

export async function fetchSubresource(url: string, headers: Record<string, string>, options: SubresourceOptions): Promise<SubresourceOutcome> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { ok: false, blocked: false, why: 'not a valid URL' };
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return { ok: false, blocked: true, why: `${target.protocol} is not fetched` };
  if (target.username || target.password) return { ok: false, blocked: true, why: 'credentials in the URL' };
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    const range = refusedRange(host, options.policy);
    if (range) return { ok: false, blocked: true, why: `${host} is ${describeRange(range)}` };
  }
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  try {
    const { statusCode, headers: got, body } = await undici().request(target, {
      method: 'GET',
      dispatcher: agentFor(options.policy),
      headers: {
        'user-agent': options.userAgent,
        accept: headers.accept ?? '*/*',
        'accept-language': headers['accept-language'] ?? 'en',
        'accept-encoding': 'identity', // the body goes to the browser as is
        ...(headers.referer ? { referer: headers.referer } : {}),
      },
      signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > options.maxBytes) {
        body.destroy();
        return { ok: false, blocked: false, why: `larger than ${options.maxBytes} bytes` };
      }
      chunks.push(chunk);
    }
    const passed: Record<string, string> = {};
    for (const name of PASSED_HEADERS) {
      const value = got[name];
      if (value !== undefined) passed[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    return { ok: true, response: { status: statusCode, headers: passed, body: Buffer.concat(chunks, total) } };
  } catch (err) {
    const blocked = causeChain(err).find((e): e is BlockedAddressError => e instanceof BlockedAddressError);
    if (blocked) return { ok: false, blocked: true, why: blocked.message };
    return { ok: false, blocked: false, why: err instanceof Error ? err.message : String(err) };
  }
}

function causeChain(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = err, depth = 0; current && depth < 6; depth++) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}
