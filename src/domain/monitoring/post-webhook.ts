/**
 * One delivery attempt: a POST of the signed body to the receiver through the outbound address
 * policy's Agent (the address actually connected to is checked, so DNS rebinding is refused too),
 * never following a redirect, within a time limit, reading at most a bounded part of the answer.
 * The outcome names a class of error, never the secret or the body.
 */
import { isIP } from 'node:net';
import type { RequestInit as UndiciRequestInit } from 'undici';
import { undici } from '../scan/undici.js';
import { refusedRange, describeRange, type AddressPolicy } from '../scan/address-policy.js';
import { BlockedAddressError, agentFor } from '../scan/guarded-agent.js';

export type AttemptErrorClass = 'http_status' | 'timeout' | 'blocked_address' | 'connection' | 'redirect' | 'too_large';

export interface AttemptOutcome {
  delivered: boolean;
  httpStatus: number | null;
  durationMs: number;
  errorClass: AttemptErrorClass | null;
}

export interface PostOptions {
  policy: AddressPolicy;
  timeoutMs: number;
  maxResponseBytes: number;
}

function blockedCause(err: unknown): BlockedAddressError | null {
  for (let e = err as { cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e instanceof BlockedAddressError) return e;
  }
  return null;
}

/**
 * Why a webhook url may not be used under the policy, judged from its text: an IP literal in a
 * refused range (a host name is judged when it is resolved, at each delivery). Null: allowed so far.
 */
export function refusedLiteral(url: string, policy: AddressPolicy): string | null {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  if (!isIP(host)) return null;
  const range = refusedRange(host, policy);
  return range ? `${host} is ${describeRange(range)}` : null;
}

/** The addresses `url`'s host resolves to that the policy refuses, described; null when none is. */
export async function refusedHost(url: string, policy: AddressPolicy): Promise<string | null> {
  const literal = refusedLiteral(url, policy);
  if (literal || policy.allowPrivateNetworks) return literal;
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host)) return null;
  const { lookup } = await import('node:dns/promises');
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true });
  } catch {
    return null; // not resolvable now: each delivery checks again
  }
  for (const { address } of addresses) {
    const range = refusedRange(address, policy);
    if (range) return `${host} resolves to ${address}, ${describeRange(range)}`;
  }
  return null;
}

export async function postWebhook(url: string, body: string, headers: Record<string, string>, opts: PostOptions): Promise<AttemptOutcome> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  const failed = (errorClass: AttemptErrorClass, httpStatus: number | null = null): AttemptOutcome => ({ delivered: false, httpStatus, durationMs: took(), errorClass });
  if (refusedLiteral(url, opts.policy)) return failed('blocked_address');
  const signal = AbortSignal.timeout(opts.timeoutMs);
  try {
    const init = {
      method: 'POST', body, headers: { 'content-type': 'application/json', 'user-agent': 'pactum-webhooks/1', ...headers },
      redirect: 'manual', signal, dispatcher: agentFor(opts.policy),
    } as UndiciRequestInit;
    const res = (await undici().fetch(url, init)) as unknown as Response;
    // The answer is read (so the connection can be reused) up to the limit, within the same time.
    let read = 0;
    if (res.body) {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        read += value.byteLength;
        if (read > opts.maxResponseBytes) {
          await reader.cancel().catch(() => {});
          return failed('too_large', res.status);
        }
      }
    }
    if (res.status >= 300 && res.status < 400) return failed('redirect', res.status);
    if (res.status < 200 || res.status >= 300) return failed('http_status', res.status);
    return { delivered: true, httpStatus: res.status, durationMs: took(), errorClass: null };
  } catch (err) {
    if (blockedCause(err)) return failed('blocked_address');
    const e = err as Error;
    if (signal.aborted || e.name === 'TimeoutError' || e.name === 'AbortError') return failed('timeout');
    return failed('connection');
  }
}
