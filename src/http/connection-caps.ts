/**
 * Caps on open connections, applied when a connection is accepted, before a byte of it is read:
 *
 *   - HTTP_MAX_CONNECTIONS, on the whole port: net.Server's maxConnections, which closes the
 *     accepted handle before Node builds a socket around it (measured: ~13 µs of the server's CPU
 *     per refused connection, against ~47 µs for one accepted and served);
 *   - HTTP_MAX_CONNECTIONS_PER_ADDRESS, per client address (an IPv6 client by its /64, the block
 *     one subscriber is given): counted in the first 'connection' listener, and a connection past
 *     it is destroyed there (~30 µs), so that one client cannot hold every descriptor the process
 *     has while the others wait.
 *
 * A trusted proxy (TRUSTED_PROXIES) is exempt from the per-address cap: every client behind it
 * shares its address, and which client a connection carries is known only once its request's
 * forwarding header is read, after accept. The proxy bounds its own clients' connections; past
 * the headers, the password throttle and the request rate apply per client. Its connections
 * still count against the port's cap.
 */
import type { Server } from 'node:http';
import type { BlockList, Socket } from 'node:net';
import { isIP } from 'node:net';
import { unmapped } from '../ground/address-list.js';

export interface ConnectionCaps {
  /** The port's cap (HTTP_MAX_CONNECTIONS). */
  maxConnections: number;
  /** The cap per client address (HTTP_MAX_CONNECTIONS_PER_ADDRESS). */
  maxPerAddress: number;
  /** Peers exempt from the per-address cap: the trusted proxies. */
  exempt: BlockList;
}

export type RefusalReason = 'global' | 'per_address';

/** The eight 16-bit groups of an IPv6 address (a trailing dotted quad counts as two). */
function ipv6Groups(address: string): string[] {
  const bare = address.replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  let text = bare;
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${bare.slice(0, -dotted[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const middle = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((g) => parseInt(g, 16).toString(16));
}

/**
 * The key a connection is counted under: an IPv4 address as it is, an IPv6 address by its /64
 * (a subscriber gets at least a /64, so counting each of its addresses apart would let one client
 * open 2^64 times the cap).
 */
export function addressKey(address: string): string {
  const a = unmapped(address);
  if (isIP(a) !== 6) return a;
  return `${ipv6Groups(a).slice(0, 4).join(':')}::/64`;
}

/** Whether a connection's peer is in `list` (the trusted proxies). */
export function peerIn(list: BlockList, socket: Socket): boolean {
  const peer = socket.remoteAddress;
  if (!peer) return false;
  const bare = unmapped(peer);
  return list.check(bare, isIP(bare) === 6 ? 'ipv6' : 'ipv4');
}

/** Applies the caps to `server`; `onRefused` is told of each connection refused, and why. */
export function capConnections(server: Server, caps: ConnectionCaps, onRefused?: (reason: RefusalReason) => void) {
  server.maxConnections = caps.maxConnections;
  server.on('drop', () => onRefused?.('global'));
  const open = new Map<string, number>();
  // First among the 'connection' listeners: a refused connection reaches no other.
  server.prependListener('connection', (socket: Socket) => {
    const peer = socket.remoteAddress;
    // Gone before it was seen (reset at once): nothing to count.
    if (!peer) return void socket.destroy();
    if (peerIn(caps.exempt, socket)) return;
    const key = addressKey(peer);
    const n = open.get(key) ?? 0;
    if (n >= caps.maxPerAddress) {
      onRefused?.('per_address');
      return void socket.destroy();
    }
    open.set(key, n + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left > 0) open.set(key, left);
      else open.delete(key);
    });
  });
}
