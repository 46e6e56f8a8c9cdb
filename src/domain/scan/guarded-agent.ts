/**
 * undici Agents whose connections resolve host names through a lookup that refuses addresses the
 * policy forbids. The check sits in the connection's own DNS lookup, so it also covers redirects
 * and DNS rebinding (the address checked is the address connected to).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { Agent } from 'undici';
import { undici } from './undici.js';
import { describeRange, refusedRange, type AddressPolicy, type AddressRange } from './address-policy.js';

/** Raised inside the connection's lookup; fetch-page turns it into a ScanFetchError. */
export class BlockedAddressError extends Error {
  readonly code = 'ERR_SCAN_BLOCKED_ADDRESS';
  constructor(readonly host: string, readonly address: string, readonly range: AddressRange) {
    super(`${host} resolves to ${address}, ${describeRange(range)}`);
    this.name = 'BlockedAddressError';
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A net.connect `lookup` that resolves every address and refuses the host if any is forbidden. */
export function createGuardedLookup(policy: AddressPolicy): LookupFunction {
  const guarded = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      for (const { address } of addresses) {
        const range = refusedRange(address, policy);
        if (range) return callback(new BlockedAddressError(hostname, address, range), []);
      }
      if (addresses.length === 0) return callback(Object.assign(new Error(`No address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
  return guarded;
}

const agents = new Map<string, Agent>();

/** One shared Agent per policy, so a crawl reuses its keep-alive connections. */
export function agentFor(policy: AddressPolicy): Agent {
  const key = policy.allowPrivateNetworks ? 'any' : `public:${[...(policy.allowedAddresses ?? [])].sort().join(',')}`;
  let agent = agents.get(key);
  if (!agent) {
    const { Agent: UndiciAgent } = undici();
    agent = policy.allowPrivateNetworks
      ? new UndiciAgent({ keepAliveTimeout: 4_000 })
      : new UndiciAgent({ keepAliveTimeout: 4_000, connect: { lookup: createGuardedLookup(policy) } });
    agents.set(key, agent);
  }
  return agent;
}

/** Closes the shared Agents (graceful shutdown). */
export async function closeAgents(): Promise<void> {
  const open = [...agents.values()];
  agents.clear();
  await Promise.all(open.map((agent) => agent.close()));
}
