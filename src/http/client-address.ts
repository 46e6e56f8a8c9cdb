/**
 * The client's address, which the password throttle and the anonymous request rate are keyed by.
 * Behind a reverse proxy every request arrives from the proxy; without this, one password sprayer
 * would hold back every user's password sign-in. TRUSTED_PROXIES lists the proxies (addresses or
 * CIDRs) whose forwarding header is believed: the header's addresses are read from the right
 * (the hop nearest to us) past every trusted proxy, and the first address that is not one is the
 * client. A request from any other peer is judged by its peer address, whatever it claims.
 *
 * One header is read, TRUSTED_PROXY_HEADER (X-Forwarded-For or Forwarded): the one the proxies
 * append to. Reading either would let a client that writes the other header choose its address.
 */
import { isIP, type BlockList } from 'node:net';
import { trustedProxies, unmapped } from '../ground/address-list.js';
import type { Middleware } from 'koa';

export type ForwardingHeader = 'x-forwarded-for' | 'forwarded';

/** One hop of a forwarding header as a bare address, or null (unknown, obfuscated, garbage). */
function hopAddress(raw: string): string | null {
  let v = raw.trim().replace(/^"(.*)"$/, '$1');
  if (v.startsWith('[')) v = v.slice(1, v.indexOf(']') > 0 ? v.indexOf(']') : undefined);
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(v)) v = v.slice(0, v.lastIndexOf(':'));
  return isIP(v) ? unmapped(v) : null;
}

/** The hops a header lists, nearest last. */
function hops(header: ForwardingHeader, value: string): string[] {
  if (header === 'x-forwarded-for') return value.split(',');
  // RFC 7239: elements separated by commas, each with ;-separated pairs; the `for` pair is the hop.
  return value.split(',').map((element) => {
    const pair = element.split(';').find((p) => /^\s*for=/i.test(p));
    return pair ? pair.slice(pair.indexOf('=') + 1) : '';
  });
}

const familyOf = (a: string) => (isIP(a) === 6 ? 'ipv6' : 'ipv4');

export function clientAddress(peer: string, header: ForwardingHeader, value: string | undefined, trusted: BlockList): string {
  let client = unmapped(peer);
  if (!value || !trusted.check(client, familyOf(client))) return client;
  const listed = hops(header, value);
  for (let i = listed.length - 1; i >= 0; i--) {
    const hop = hopAddress(listed[i]!);
    // A hop nobody can read ends the walk: the last trusted proxy is the best we know.
    if (!hop) break;
    client = hop;
    if (!trusted.check(hop, familyOf(hop))) break;
  }
  return client;
}

/** Sets ctx.ip to the client's address (see above); a no-op when no proxy is trusted. */
export function clientAddressMiddleware(entries: readonly string[], header: ForwardingHeader): Middleware {
  if (!entries.length) return (_ctx, next) => next();
  const trusted = trustedProxies(entries);
  return function forwardedFor(ctx, next) {
    ctx.request.ip = clientAddress(ctx.req.socket.remoteAddress ?? '', header, ctx.get(header) || undefined, trusted);
    return next();
  };
}
