/**
 * Which IP addresses a scan or a service call may connect to. A server that fetches
 * user-supplied URLs must not become a way into its own network (SSRF), so every range of the
 * IANA IPv4 and IPv6 Special-Purpose Address Registries (and multicast, and IPv6 outside global
 * unicast 2000::/3) is refused unless the deployment explicitly allows private networks.
 * Forms that carry an IPv4 address inside an IPv6 one (IPv4-mapped, IPv4-translated, NAT64,
 * 6to4, IPv4-compatible) are judged by the IPv4 address they carry, as that is where they lead.
 * Range membership is node:net's BlockList; the tables below are the whole policy.
 */
import { BlockList, isIP } from 'node:net';

export type AddressRange =
  | 'public'
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'unique-local'
  | 'carrier-grade-nat'
  | 'multicast'
  | 'unspecified'
  | 'documentation'
  | 'benchmarking'
  | 'special-purpose'
  | 'reserved';

/** Where an IPv6 range carries an IPv4 address: in its last 32 bits, or (6to4) in bits 16–47. */
type Embedding = 'low32' | '6to4';

interface SpecialRange {
  name: string;
  cidr: string;
  /** The range's class; for a range that embeds IPv4, the class when the IPv4 inside is public. */
  range: AddressRange;
  embeds?: Embedding;
}

/** The IANA IPv4 Special-Purpose Address Registry, and multicast; the first match names the range. */
const IPV4_SPECIAL: readonly SpecialRange[] = [
  { name: '"This network"', cidr: '0.0.0.0/8', range: 'unspecified' },
  { name: 'Private-Use', cidr: '10.0.0.0/8', range: 'private' },
  { name: 'Shared Address Space', cidr: '100.64.0.0/10', range: 'carrier-grade-nat' },
  { name: 'Loopback', cidr: '127.0.0.0/8', range: 'loopback' },
  { name: 'Link Local', cidr: '169.254.0.0/16', range: 'link-local' },
  { name: 'Private-Use', cidr: '172.16.0.0/12', range: 'private' },
  { name: 'IETF Protocol Assignments', cidr: '192.0.0.0/24', range: 'special-purpose' },
  { name: 'Documentation (TEST-NET-1)', cidr: '192.0.2.0/24', range: 'documentation' },
  { name: 'AS112-v4', cidr: '192.31.196.0/24', range: 'special-purpose' },
  { name: 'AMT', cidr: '192.52.193.0/24', range: 'special-purpose' },
  { name: 'Deprecated (6to4 Relay Anycast)', cidr: '192.88.99.0/24', range: 'special-purpose' },
  { name: 'Private-Use', cidr: '192.168.0.0/16', range: 'private' },
  { name: 'Direct Delegation AS112 Service', cidr: '192.175.48.0/24', range: 'special-purpose' },
  { name: 'Benchmarking', cidr: '198.18.0.0/15', range: 'benchmarking' },
  { name: 'Documentation (TEST-NET-2)', cidr: '198.51.100.0/24', range: 'documentation' },
  { name: 'Documentation (TEST-NET-3)', cidr: '203.0.113.0/24', range: 'documentation' },
  { name: 'Multicast', cidr: '224.0.0.0/4', range: 'multicast' },
  { name: 'Limited Broadcast', cidr: '255.255.255.255/32', range: 'reserved' },
  { name: 'Reserved', cidr: '240.0.0.0/4', range: 'reserved' },
];

/** The IANA IPv6 Special-Purpose Address Registry, multicast, and what lies outside 2000::/3. */
const IPV6_SPECIAL: readonly SpecialRange[] = [
  { name: 'Unspecified Address', cidr: '::/128', range: 'unspecified' },
  { name: 'Loopback Address', cidr: '::1/128', range: 'loopback' },
  { name: 'IPv4-mapped Address', cidr: '::ffff:0:0/96', range: 'public', embeds: 'low32' },
  { name: 'IPv4-translated Address', cidr: '::ffff:0:0:0/96', range: 'public', embeds: 'low32' },
  // Deprecated (RFC 4291): it has no meaning of its own, so even a public IPv4 inside is refused.
  { name: 'IPv4-compatible Address', cidr: '::/96', range: 'reserved', embeds: 'low32' },
  { name: 'IPv4-IPv6 Translation', cidr: '64:ff9b::/96', range: 'public', embeds: 'low32' },
  { name: 'Local-use IPv4/IPv6 Translation', cidr: '64:ff9b:1::/48', range: 'private' },
  { name: 'Discard-Only Address Block', cidr: '100::/64', range: 'special-purpose' },
  { name: 'Dummy IPv6 Prefix', cidr: '100:0:0:1::/64', range: 'special-purpose' },
  { name: 'TEREDO', cidr: '2001::/32', range: 'special-purpose' },
  { name: 'Benchmarking', cidr: '2001:2::/48', range: 'benchmarking' },
  { name: 'IETF Protocol Assignments', cidr: '2001::/23', range: 'special-purpose' },
  { name: 'Documentation', cidr: '2001:db8::/32', range: 'documentation' },
  { name: '6to4', cidr: '2002::/16', range: 'public', embeds: '6to4' },
  { name: 'Direct Delegation AS112 Service', cidr: '2620:4f:8000::/48', range: 'special-purpose' },
  { name: 'Documentation', cidr: '3fff::/20', range: 'documentation' },
  { name: 'Segment Routing (SRv6) SIDs', cidr: '5f00::/16', range: 'special-purpose' },
  { name: 'Unique-Local', cidr: 'fc00::/7', range: 'unique-local' },
  { name: 'Link-Local Unicast', cidr: 'fe80::/10', range: 'link-local' },
  { name: 'Site-Local (deprecated)', cidr: 'fec0::/10', range: 'private' },
  { name: 'Multicast', cidr: 'ff00::/8', range: 'multicast' },
];

interface Rule extends SpecialRange { list: BlockList }

function rules(table: readonly SpecialRange[], family: 'ipv4' | 'ipv6'): Rule[] {
  return table.map((entry) => {
    const [network, bits] = entry.cidr.split('/') as [string, string];
    const list = new BlockList();
    list.addSubnet(network, Number(bits), family);
    return { ...entry, list };
  });
}

const IPV4_RULES = rules(IPV4_SPECIAL, 'ipv4');
const IPV6_RULES = rules(IPV6_SPECIAL, 'ipv6');
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

function classifyIpv4(address: string): AddressRange {
  return IPV4_RULES.find((r) => r.list.check(address, 'ipv4'))?.range ?? 'public';
}

/** IPv6 text (valid, without a zone) → eight 16-bit groups; a trailing dotted IPv4 is two groups. */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function carriedIpv4(groups: readonly number[], embedding: Embedding): string {
  const [hi, lo] = embedding === '6to4' ? [groups[1]!, groups[2]!] : [groups[6]!, groups[7]!];
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
}

function classifyIpv6(address: string): AddressRange {
  const rule = IPV6_RULES.find((r) => r.list.check(address, 'ipv6'));
  if (rule?.embeds) {
    const carried = classifyIpv4(carriedIpv4(ipv6Groups(address), rule.embeds));
    return carried === 'public' ? rule.range : carried;
  }
  if (rule) return rule.range;
  // IANA has allocated only 2000::/3 for global unicast; the rest is reserved by the IETF.
  return GLOBAL_UNICAST.check(address, 'ipv6') ? 'public' : 'reserved';
}

/** Brackets and a zone id ("[fe80::1%eth0]") off: the address itself. */
const bare = (address: string) => (address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address).split('%')[0]!;

/** The range an IP address falls in; throws for text that is not an IP address. */
export function classifyAddress(address: string): AddressRange {
  const ip = bare(address);
  const family = isIP(ip);
  if (family === 4) return classifyIpv4(ip);
  if (family === 6) return classifyIpv6(ip);
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
  const [x, y] = [bare(a).toLowerCase(), bare(b).toLowerCase()];
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
  documentation: 'an address reserved for documentation',
  benchmarking: 'an address reserved for benchmarking',
  'special-purpose': 'a special-purpose address (IANA registry)',
  reserved: 'a reserved address',
};

export function describeRange(range: AddressRange): string {
  return RANGE_WORDS[range];
}
