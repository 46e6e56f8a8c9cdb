/**
 * The tokens in action and link headers: `Authorization: Bearer <payload>.<mac>`, an HMAC-SHA256
 * over a small JSON payload naming the repository, the object, its size, the operation, the
 * user, the user's credential version and the expiry (format 2; format 1 had no version and is
 * refused). Signing and checking are a few microseconds, so a batch of a thousand
 * objects gets a thousand tokens, each good for exactly one transfer.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config.js';
import { loadOrCreateKey, parseKey } from '../auth/keys.js';
import type { TransferGrant } from '../auth/identity.js';

export interface TransferClaims extends TransferGrant {
  subject: string;
  username: string | null;
  orgId: string;
  /** The user's credential version at signing; null for anonymous and service callers. */
  credentialVersion?: number | null;
  /** Seconds since the epoch. */
  exp: number;
}

export class TransferTokenError extends Error {}

/** The payload as sign() writes it (the version first: 2). Only a payload with our MAC is parsed. */
type Payload = [
  version: number, repoId: string, oid: string, size: number, op: TransferGrant['op'], subject: string,
  username: string | null, orgId: string, exp: number, credentialVersion: number | null,
];

export function createTransferTokens(config: Config) {
  const key = config.lfs.transferTokenSecret
    ? parseKey(config.lfs.transferTokenSecret, 'TRANSFER_TOKEN_SECRET')
    : loadOrCreateKey(config.dataDir, 'transfer-hmac', 32);
  const mac = (payload: string) => createHmac('sha256', key).update(payload).digest();
  return {
    sign(c: TransferClaims): string {
      const payload = Buffer.from(JSON.stringify([2, c.repoId, c.oid, c.size, c.op, c.subject, c.username, c.orgId, c.exp, c.credentialVersion ?? null])).toString('base64url');
      return `${payload}.${mac(payload).toString('base64url')}`;
    },
    verify(token: string, now = Date.now()): TransferClaims {
      const parts = token.split('.');
      const [payload, signature] = parts;
      if (parts.length !== 2 || !payload || !signature) throw new TransferTokenError('malformed transfer token');
      const given = Buffer.from(signature, 'base64url');
      // Node's decoder skips what is not base64url: only the canonical spelling of the MAC counts.
      if (given.toString('base64url') !== signature) throw new TransferTokenError('malformed transfer token');
      const expected = mac(payload);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new TransferTokenError('the transfer token is not valid');
      const [v, repoId, oid, size, op, subject, username, orgId, exp, credentialVersion] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Payload;
      if (v !== 2) throw new TransferTokenError('unknown transfer token version');
      if (exp * 1000 < now) throw new TransferTokenError('the transfer token has expired; request new actions');
      return { repoId, oid, size, op, subject, username, orgId, exp, credentialVersion };
    },
  };
}

export type TransferTokens = ReturnType<typeof createTransferTokens>;
