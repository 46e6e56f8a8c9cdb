/**
 * What a connection is counted under for the per-address cap (an IPv6 client by its /64, an
 * IPv4-mapped address as IPv4), and the descriptor limit the default port cap is made from.
 */
import { describe, expect, it } from 'vitest';
import { addressKey } from '../../src/http/connection-caps.js';
import { defaultMaxConnections, parseDescriptorLimit } from '../../src/ground/descriptor-limit.js';

describe('addressKey', () => {
  it('counts an IPv4 client by its address, however the socket reports it', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('counts an IPv6 client by its /64, whichever way the address is written', () => {
    const key = addressKey('2001:db8:aa:bb::1');
    expect(key).toBe('2001:db8:aa:bb::/64');
    for (const same of ['2001:db8:aa:bb:ffff:1:2:3', '2001:0db8:00aa:00bb:0:0:0:9', '2001:db8:aa:bb::1%eth0', '2001:db8:aa:bb:0:0:1.2.3.4']) expect(addressKey(same)).toBe(key);
    expect(addressKey('2001:db8:aa:bc::1')).not.toBe(key);
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('2001:db8::')).toBe('2001:db8:0:0::/64');
  });
});

describe('the descriptor limit', () => {
  const limits = (soft: string, hard: string) => `Limit                     Soft Limit           Hard Limit           Units\nMax processes             63762                63762                processes\nMax open files            ${soft.padEnd(20)} ${hard.padEnd(20)} files\n`;

  it('is read from /proc/self/limits', () => {
    expect(parseDescriptorLimit(limits('1024', '524288'))).toEqual({ soft: 1024, hard: 524288 });
    expect(parseDescriptorLimit(limits('20000', 'unlimited'))).toEqual({ soft: 20000, hard: null });
    expect(parseDescriptorLimit('Max processes 1 1 processes')).toBeNull();
  });

  it('gives the port a cap of half what is left after the descriptors kept for files and the database, at most 10,000', () => {
    expect(defaultMaxConnections({ soft: 20000, hard: 20000 })).toBe(9872);
    expect(defaultMaxConnections({ soft: 1024, hard: 4096 })).toBe(384);
    expect(defaultMaxConnections({ soft: 256, hard: 256 })).toBe(32);
    expect(defaultMaxConnections({ soft: 524288, hard: 524288 })).toBe(10_000);
    expect(defaultMaxConnections(null)).toBe(10_000);
  });
});
