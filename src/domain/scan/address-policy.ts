/**
 * Which IP addresses a scan may connect to. A scanner that fetches user-supplied URLs must not
 * become a way into the server's own network (SSRF), so private and special-purpose ranges are
 * refused unless the deployment explicitly allows private networks.
 */
import { isIP } from 'node:net';

export type AddressRange =
  | 'public'
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'unique-local'
  | 'carrier-grade-nat'
  | 'multicast'
  | 'unspecified'
  | 'reserved';

interface Ipv4Rule { base: number; bits: number; range: AddressRange }

const IPV4_RULES: readonly Ipv4Rule[] = [
  { base: ipv4('0.0.0.0'), bits: 8, range: 'unspecified' },
  { base: ipv4('10.0.0.0'), bits: 8, range: 'private' },
  { base: ipv4('100.64.0.0'), bits: 10, range: 'carrier-grade-nat' },
  { base: ipv4('127.0.0.0'), bits: 8, range: 'loopback' },
  { base: ipv4('169.254.0.0'), bits: 16, range: 'link-local' },
  { base: ipv4('172.16.0.0'), bits: 12, range: 'private' },
  { base: ipv4('192.0.0.0'), bits: 24, range: 'reserved' },
  { base: ipv4('192.168.0.0'), bits: 16, range: 'private' },
  { base: ipv4('198.18.0.0'), bits: 15, range: 'reserved' },
  { base: ipv4('224.0.0.0'), bits: 4, range: 'multicast' },
  { base: ipv4('240.0.0.0'), bits: 4, range: 'reserved' },
];

/** Dotted IPv4 → unsigned 32-bit number; the caller guarantees a valid address. */
function ipv4(address: string): number {
  return address.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

function classifyIpv4(value: number): AddressRange {
  for (const rule of IPV4_RULES) {
    const size = 2 ** (32 - rule.bits);
    if (Math.floor(value / size) === Math.floor(rule.base / size)) return rule.range;
  }
  return 'public';
}

/** IPv6 text → eight 16-bit groups (handles "::" and a trailing dotted IPv4). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0]!; // drop a zone id ("fe80::1%eth0")
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (dotted) {
    const v = ipv4(dotted);
    text = `${text.slice(0, -dotted.length)}${(v >>> 16).toString(16)}:${(v & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function classifyIpv6(groups: readonly number[]): AddressRange {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  const embeddedV4 = g6 * 65536 + g7;
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroPrefix && g5 === 0xffff) return classifyIpv4(embeddedV4); // ::ffff:a.b.c.d (IPv4-mapped)
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyIpv4(embeddedV4); // NAT64
  // Transition prefixes reach the IPv4 address they carry, so they are classified by it.
  if (g0 === 0x2002) return classifyIpv4(g1 * 65536 + g2); // 6to4 2002:AABB:CCDD::/48
  if (g0 === 0x2001 && g1 === 0) return classifyIpv4((embeddedV4 ^ 0xffffffff) >>> 0); // Teredo: client IPv4 XOR 0xffffffff
  if (zeroPrefix && g5 === 0) {
    if (g6 === 0 && g7 === 0) return 'unspecified';
    if (g6 === 0 && g7 === 1) return 'loopback';
    const carried = classifyIpv4(embeddedV4); // deprecated IPv4-compatible ::a.b.c.d
    return carried === 'public' ? 'reserved' : carried;
  }
  if ((g0 & 0xfe00) === 0xfc00) return 'unique-local';
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // deprecated site-local
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  return 'public';
}

/** The range an IP address falls in; throws for text that is not an IP address. */
export function classifyAddress(address: string): AddressRange {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare.split('%')[0]!);
  if (family === 4) return classifyIpv4(ipv4(bare));
  if (family === 6) return classifyIpv6(ipv6Groups(bare));
  throw new TypeError(`Not an IP address: ${address}`);
}

export interface AddressPolicy {
  allowPrivateNetworks: boolean;
  /** Exact addresses let through even when private networks are refused (an intranet host one trusts). */
  allowedAddresses?: readonly string[];
}

/** The range that makes the policy refuse this address, or null when it may be used. */
export function refusedRange(address: string, policy: AddressPolicy): AddressRange | null {
  if (policy.allowPrivateNetworks) return null;
  const range = classifyAddress(address);
  if (range === 'public') return null;
  if (policy.allowedAddresses?.some((allowed) => sameAddress(allowed, address))) return null;
  return range;
}

function sameAddress(a: string, b: string): boolean {
  const strip = (s: string) => (s.startsWith('[') ? s.slice(1, -1) : s).toLowerCase();
  const [x, y] = [strip(a), strip(b)];
  if (x === y) return true;
  return isIP(x) === 6 && isIP(y) === 6 && ipv6Groups(x).join(':') === ipv6Groups(y).join(':');
}

const RANGE_WORDS: Record<AddressRange, string> = {
  public: 'a public address',
  private: 'a private network address',
  loopback: 'a loopback address (this server itself)',
  'link-local': 'a link-local address',
  'unique-local': 'a unique-local (private) IPv6 address',
  'carrier-grade-nat': 'a carrier-grade NAT address',
  multicast: 'a multicast address',
  unspecified: 'an unspecified address',
  reserved: 'a reserved address',
};

export function describeRange(range: AddressRange): string {
  return RANGE_WORDS[range];
}
