/**
 * Checked when a scan is asked for, so a refused address is an immediate, clear error rather
 * than a failed scan later. The engine checks again on every connection (redirects, rebinding).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ScanFetchError, checkedTarget } from '../domain/scan/fetch-page.js';
import { describeRange, refusedRange } from '../domain/scan/address-policy.js';

export async function checkScanTarget(raw: string, allowPrivateNetworks: boolean): Promise<URL> {
  const url = checkedTarget(raw, { allowPrivateNetworks });
  if (allowPrivateNetworks) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return url; // checkedTarget has judged the literal address
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true });
  } catch {
    throw new ScanFetchError('bad-url', `${url.hostname} cannot be resolved; check the address`);
  }
  for (const { address } of addresses) {
    const range = refusedRange(address, { allowPrivateNetworks });
    if (range) {
      throw new ScanFetchError('blocked-address', `${url.hostname} resolves to ${address}, ${describeRange(range)}; scans of private networks are refused (an operator can allow them with SCAN_ALLOW_PRIVATE_NETWORKS=true)`);
    }
  }
  return url;
}
