import { describe, expect, it } from 'vitest';
import { classifyAddress, refusedRange } from '../../../src/domain/scan/address-policy.js';

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['100.63.255.255', 'public'],
    ['100.128.0.0', 'public'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade-nat'],
    ['100.127.255.255', 'carrier-grade-nat'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
  ])('IPv4 %s is %s', (address, range) => {
    expect(classifyAddress(address)).toBe(range);
  });

  it.each([
    ['2606:4700:4700::1111', 'public'],
    ['2001:db8::1', 'public'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['ff02::1', 'multicast'],
  ])('IPv6 %s is %s', (address, range) => {
    expect(classifyAddress(address)).toBe(range);
  });

  it.each([
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:192.168.0.1', 'private'],
    ['0:0:0:0:0:ffff:c0a8:0001', 'private'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['::127.0.0.1', 'loopback'],
    ['::10.0.0.1', 'private'],
    ['::8.8.8.8', 'reserved'],
  ])('mapped / translated %s is %s', (address, range) => {
    expect(classifyAddress(address)).toBe(range);
  });

  // 6to4 carries the IPv4 address in bits 16-47; Teredo the client's IPv4 XOR 0xffffffff in the last 32.
  it.each([
    ['2002:7f00:1::1', 'loopback'],
    ['2002:a00:1::', 'private'],
    ['2002:a9fe:a9fe::1', 'link-local'],
    ['2002:808:808::1', 'public'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'], // 127.0.0.1
    ['2001::f5ff:fffe', 'private'], // 10.0.0.1
    ['2001:0:1:2::5601:5601', 'link-local'], // 169.254.169.254
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'public'], // 8.8.8.8
    ['2001:db8::7f00:1', 'public'], // documentation prefix, not Teredo: not decoded
  ])('transition prefix %s is %s', (address, range) => {
    expect(classifyAddress(address)).toBe(range);
  });

  it('throws for host names', () => {
    expect(() => classifyAddress('localhost')).toThrow(/Not an IP address/);
  });
});

describe('refusedRange', () => {
  it('refuses non-public addresses unless private networks are allowed', () => {
    expect(refusedRange('10.0.0.1', { allowPrivateNetworks: false })).toBe('private');
    expect(refusedRange('10.0.0.1', { allowPrivateNetworks: true })).toBeNull();
    expect(refusedRange('8.8.8.8', { allowPrivateNetworks: false })).toBeNull();
  });

  it('lets exactly the allowed addresses through', () => {
    const policy = { allowPrivateNetworks: false, allowedAddresses: ['127.0.0.1', '::1'] };
    expect(refusedRange('127.0.0.1', policy)).toBeNull();
    expect(refusedRange('0:0:0:0:0:0:0:1', policy)).toBeNull();
    expect(refusedRange('127.0.0.2', policy)).toBe('loopback');
  });
});
