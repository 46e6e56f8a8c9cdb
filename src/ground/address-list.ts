/**
 * Lists of addresses and networks as the settings give them (TRUSTED_PROXIES), and addresses as
 * a dual-stack socket reports them: read by the settings, which refuse a bad entry at start, and
 * by the HTTP kernel, which judges each request's peer.
 */
import { BlockList, isIP } from 'node:net';

/** A list of addresses and CIDRs as a BlockList; throws naming the first entry that is neither. */
export function trustedProxies(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (!family || extra !== undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32) || (bits !== undefined && !/^\d+$/.test(bits))) {
      throw new Error(`${entry} is not an address or a CIDR (like 10.0.0.0/8 or fd00::/8)`);
    }
    list.addSubnet(address!, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

/** An IPv4-mapped IPv6 address (::ffff:1.2.3.4, how a dual-stack socket reports IPv4) as IPv4. */
export const unmapped = (address: string) => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address);
