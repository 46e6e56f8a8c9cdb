/**
 * The client's address behind trusted reverse proxies: the forwarding header is believed only
 * from a trusted peer, read from the nearest hop past every trusted proxy, and never lets a client
 * choose its own address.
 */
import { describe, expect, it } from 'vitest';
import { clientAddress } from '../../src/http/client-address.js';
import { trustedProxies } from '../../src/ground/address-list.js';
import { ConfigError, loadConfig } from '../../src/ground/config.js';

const proxies = trustedProxies(['10.0.0.0/8', '192.168.1.7', 'fd00::/8']);

describe('clientAddress', () => {
  const cases: [string, string, 'x-forwarded-for' | 'forwarded', string | undefined, string][] = [
    ['no proxy trusted: the peer', '203.0.113.9', 'x-forwarded-for', '198.51.100.1', '203.0.113.9'],
    ['a trusted proxy, one hop', '10.1.2.3', 'x-forwarded-for', '198.51.100.1', '198.51.100.1'],
    ['a trusted proxy without the header: the proxy', '10.1.2.3', 'x-forwarded-for', undefined, '10.1.2.3'],
    ['two trusted proxies in a row', '10.1.2.3', 'x-forwarded-for', '198.51.100.1, 192.168.1.7', '198.51.100.1'],
    ['a client that writes the header itself is judged by the hop the proxy appended', '10.1.2.3', 'x-forwarded-for', '1.1.1.1, 198.51.100.1', '198.51.100.1'],
    ['an untrusted peer that claims an address', '198.51.100.66', 'x-forwarded-for', '10.9.9.9', '198.51.100.66'],
    ['IPv4-mapped peer', '::ffff:10.1.2.3', 'x-forwarded-for', '198.51.100.1', '198.51.100.1'],
    ['IPv6 proxy and client', 'fd00::1', 'x-forwarded-for', '2001:db8::5', '2001:db8::5'],
    ['garbage hop: the last trusted proxy', '10.1.2.3', 'x-forwarded-for', 'not-an-address', '10.1.2.3'],
    ['every hop trusted: the farthest', '10.1.2.3', 'x-forwarded-for', '10.5.5.5, 10.6.6.6', '10.5.5.5'],
    ['Forwarded, quoted IPv6 with port', '10.1.2.3', 'forwarded', 'for="[2001:db8:cafe::17]:4711";proto=https', '2001:db8:cafe::17'],
    ['Forwarded, two elements', '10.1.2.3', 'forwarded', 'for=198.51.100.1, for=192.168.1.7;by=10.1.2.3', '198.51.100.1'],
    ['Forwarded, unknown', '10.1.2.3', 'forwarded', 'for=unknown', '10.1.2.3'],
    ['Forwarded, IPv4 with port', '10.1.2.3', 'forwarded', 'for=198.51.100.1:5000', '198.51.100.1'],
  ];
  it.each(cases)('%s', (_name, peer, header, value, expected) => {
    expect(clientAddress(peer, header, value, proxies)).toBe(expected);
  });

  it('reads only the chosen header', () => {
    // Proxies append to X-Forwarded-For; a Forwarded header the client wrote is not read.
    expect(clientAddress('10.1.2.3', 'x-forwarded-for', '198.51.100.1', proxies)).toBe('198.51.100.1');
  });
});

describe('TRUSTED_PROXIES', () => {
  it('accepts addresses and CIDRs of both families', () => {
    expect(loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1, ::1, fd00::/8' }).trustedProxies).toEqual(['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8']);
  });
  it.each(['10.0.0/8', '10.0.0.0/33', 'proxy.internal', '10.0.0.0/8/1', '::1/129', '10.0.0.0/x'])('refuses %s, naming it', (entry) => {
    expect(() => loadConfig({ TRUSTED_PROXIES: entry })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUSTED_PROXIES: entry })).toThrow(new RegExp(`TRUSTED_PROXIES: ${entry.replace(/[./]/g, '\\$&')} is not an address or a CIDR`));
  });
  it('refuses an unknown header', () => {
    expect(() => loadConfig({ TRUSTED_PROXY_HEADER: 'x-real-ip' })).toThrow(/TRUSTED_PROXY_HEADER/);
  });
});
