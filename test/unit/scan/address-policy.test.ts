/**
 * The outbound address policy against the IANA IPv4 and IPv6 Special-Purpose Address Registries:
 * every range, a sample inside it (refused) and, where it has one, a public sample just outside
 * (allowed), so a range drawn too wide shows as well as one drawn too narrow.
 */
import { describe, expect, it } from 'vitest';
import { classifyAddress, refusedRange, type AddressRange } from '../../../src/domain/scan/address-policy.js';

const REFUSE = { allowPrivateNetworks: false };
const ALLOW = { allowPrivateNetworks: true };

/** [registry name, CIDR, an address inside, its class, a public address just outside (or null)]. */
const IPV4: [string, string, string, AddressRange, string | null][] = [
  ['"This network"', '0.0.0.0/8', '0.1.2.3', 'unspecified', '1.0.0.0'],
  ['"This host on this network"', '0.0.0.0/32', '0.0.0.0', 'unspecified', null],
  ['Private-Use', '10.0.0.0/8', '10.255.255.255', 'private', '11.0.0.0'],
  ['Shared Address Space', '100.64.0.0/10', '100.127.255.255', 'carrier-grade-nat', '100.128.0.0'],
  ['Shared Address Space (low edge)', '100.64.0.0/10', '100.64.0.0', 'carrier-grade-nat', '100.63.255.255'],
  ['Loopback', '127.0.0.0/8', '127.255.0.9', 'loopback', '128.0.0.0'],
  ['Link Local', '169.254.0.0/16', '169.254.169.254', 'link-local', '169.255.0.0'],
  ['Private-Use', '172.16.0.0/12', '172.31.255.255', 'private', '172.32.0.0'],
  ['Private-Use (low edge)', '172.16.0.0/12', '172.16.0.1', 'private', '172.15.255.255'],
  ['IETF Protocol Assignments', '192.0.0.0/24', '192.0.0.1', 'special-purpose', '192.0.1.0'],
  ['IPv4 Service Continuity Prefix', '192.0.0.0/29', '192.0.0.7', 'special-purpose', null],
  ['IPv4 dummy address', '192.0.0.8/32', '192.0.0.8', 'special-purpose', null],
  ['Port Control Protocol Anycast', '192.0.0.9/32', '192.0.0.9', 'special-purpose', null],
  ['Traversal Using Relays around NAT Anycast', '192.0.0.10/32', '192.0.0.10', 'special-purpose', null],
  ['NAT64/DNS64 Discovery', '192.0.0.170/31', '192.0.0.171', 'special-purpose', null],
  ['Documentation (TEST-NET-1)', '192.0.2.0/24', '192.0.2.1', 'documentation', '192.0.3.0'],
  ['AS112-v4', '192.31.196.0/24', '192.31.196.1', 'special-purpose', '192.31.197.0'],
  ['AMT', '192.52.193.0/24', '192.52.193.1', 'special-purpose', '192.52.194.0'],
  ['Deprecated (6to4 Relay Anycast)', '192.88.99.0/24', '192.88.99.1', 'special-purpose', '192.88.100.0'],
  ['6a44-relay anycast address', '192.88.99.2/32', '192.88.99.2', 'special-purpose', null],
  ['Private-Use', '192.168.0.0/16', '192.168.255.255', 'private', '192.169.0.0'],
  ['Direct Delegation AS112 Service', '192.175.48.0/24', '192.175.48.1', 'special-purpose', '192.175.49.0'],
  ['Benchmarking', '198.18.0.0/15', '198.19.255.255', 'benchmarking', '198.20.0.0'],
  ['Benchmarking (low edge)', '198.18.0.0/15', '198.18.0.0', 'benchmarking', '198.17.255.255'],
  ['Documentation (TEST-NET-2)', '198.51.100.0/24', '198.51.100.7', 'documentation', '198.51.101.0'],
  ['Documentation (TEST-NET-3)', '203.0.113.0/24', '203.0.113.255', 'documentation', '203.0.114.0'],
  ['Multicast', '224.0.0.0/4', '239.255.255.250', 'multicast', '223.255.255.255'],
  ['Reserved', '240.0.0.0/4', '240.0.0.1', 'reserved', null],
  ['Limited Broadcast', '255.255.255.255/32', '255.255.255.255', 'reserved', null],
];

const IPV6: [string, string, string, AddressRange, string | null][] = [
  ['Unspecified Address', '::/128', '::', 'unspecified', null],
  ['Loopback Address', '::1/128', '0:0:0:0:0:0:0:1', 'loopback', null],
  ['IPv4-mapped Address (loopback inside)', '::ffff:0:0/96', '::ffff:127.0.0.1', 'loopback', '::ffff:8.8.8.8'],
  ['IPv4-mapped Address (hex)', '::ffff:0:0/96', '::ffff:7f00:1', 'loopback', null],
  ['IPv4-translated Address', '::ffff:0:0:0/96', '::ffff:0:127.0.0.1', 'loopback', '::ffff:0:8.8.8.8'],
  ['IPv4-translated Address (hex, private inside)', '::ffff:0:0:0/96', '::ffff:0:a00:1', 'private', null],
  ['IPv4-compatible Address (deprecated)', '::/96', '::10.0.0.1', 'private', null],
  ['IPv4-compatible Address with a public IPv4', '::/96', '::8.8.8.8', 'reserved', null],
  ['IPv4-IPv6 Translation (NAT64)', '64:ff9b::/96', '64:ff9b::169.254.169.254', 'link-local', '64:ff9b::8.8.8.8'],
  ['Local-use IPv4/IPv6 Translation', '64:ff9b:1::/48', '64:ff9b:1::8.8.8.8', 'private', null],
  ['Discard-Only Address Block', '100::/64', '100::1', 'special-purpose', null],
  ['Dummy IPv6 Prefix', '100:0:0:1::/64', '100:0:0:1::1', 'special-purpose', null],
  ['IETF Protocol Assignments', '2001::/23', '2001:1ff::1', 'special-purpose', '2001:200::1'],
  ['TEREDO', '2001::/32', '2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'special-purpose', null],
  ['Port Control Protocol Anycast', '2001:1::1/128', '2001:1::1', 'special-purpose', null],
  ['Traversal Using Relays around NAT Anycast', '2001:1::2/128', '2001:1::2', 'special-purpose', null],
  ['DNS-SD Service Registration Protocol Anycast', '2001:1::3/128', '2001:1::3', 'special-purpose', null],
  ['Benchmarking', '2001:2::/48', '2001:2::1', 'benchmarking', null],
  ['AMT', '2001:3::/32', '2001:3::1', 'special-purpose', null],
  ['AS112-v6', '2001:4:112::/48', '2001:4:112::1', 'special-purpose', null],
  ['Deprecated (previously ORCHID)', '2001:10::/28', '2001:10::1', 'special-purpose', null],
  ['ORCHIDv2', '2001:20::/28', '2001:20::1', 'special-purpose', null],
  ['Drone Remote ID Protocol Entity Tags (DETs) Prefix', '2001:30::/28', '2001:30::1', 'special-purpose', null],
  ['Documentation', '2001:db8::/32', '2001:db8::1', 'documentation', '2001:db9::1'],
  ['6to4 (loopback inside)', '2002::/16', '2002:7f00:1::1', 'loopback', '2002:808:808::1'],
  ['6to4 (private inside)', '2002::/16', '2002:a00:1::', 'private', null],
  ['6to4 (link-local inside)', '2002::/16', '2002:a9fe:a9fe::1', 'link-local', null],
  ['Direct Delegation AS112 Service', '2620:4f:8000::/48', '2620:4f:8000::1', 'special-purpose', '2620:4f:8001::1'],
  ['Documentation', '3fff::/20', '3fff:fff::1', 'documentation', '3fff:1000::1'],
  ['Segment Routing (SRv6) SIDs', '5f00::/16', '5f00::1', 'special-purpose', null],
  ['Unique-Local', 'fc00::/7', 'fd12:3456:789a::1', 'unique-local', null],
  ['Link-Local Unicast', 'fe80::/10', 'febf::1', 'link-local', null],
  ['Link-Local Unicast with a zone', 'fe80::/10', 'fe80::1%eth0', 'link-local', null],
  ['Site-Local (deprecated)', 'fec0::/10', 'fec0::1', 'private', null],
  ['Multicast', 'ff00::/8', 'ff02::1', 'multicast', null],
  ['Outside global unicast 2000::/3', '::/3', '1::', 'reserved', '2000::1'],
  ['Outside global unicast 2000::/3 (high side)', '4000::/2', '4000::1', 'reserved', '3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
];

describe('the IANA special-purpose ranges', () => {
  it.each([...IPV4, ...IPV6])('%s %s: %s is refused as %s', (_name, _cidr, inside, range, outside) => {
    expect(classifyAddress(inside)).toBe(range);
    expect(refusedRange(inside, REFUSE)).toBe(range);
    expect(refusedRange(`[${inside}]`, REFUSE)).toBe(range);
    expect(refusedRange(inside, ALLOW)).toBeNull();
    if (outside) {
      expect(classifyAddress(outside)).toBe('public');
      expect(refusedRange(outside, REFUSE)).toBeNull();
    }
  });

  it.each(['8.8.8.8', '93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e'])('%s is public', (address) => {
    expect(classifyAddress(address)).toBe('public');
  });

  it('throws for host names', () => {
    expect(() => classifyAddress('localhost')).toThrow(/Not an IP address/);
  });
});

describe('refusedRange', () => {
  it('lets exactly the allowed addresses through', () => {
    const policy = { allowPrivateNetworks: false, allowedAddresses: ['127.0.0.1', '::1'] };
    expect(refusedRange('127.0.0.1', policy)).toBeNull();
    expect(refusedRange('0:0:0:0:0:0:0:1', policy)).toBeNull();
    expect(refusedRange('[::1]', policy)).toBeNull();
    expect(refusedRange('127.0.0.2', policy)).toBe('loopback');
    expect(refusedRange('::ffff:0:127.0.0.1', policy)).toBe('loopback');
  });
});
