/**
 * The tokens in action and link headers: `Authorization: Bearer <token>`. Each grants exactly one
 * transfer: one operation on one object of one size in one repository, for one user under one
 * credential version, until an expiry.
 *
 * Format 3 (what a batch issues): `<claims>.<oid>.<size>.<tag>`. `<claims>` is base64url JSON
 * `[3, repoId, op, subject, username, orgId, exp, credentialVersion]`, the same for every object
 * of a batch. A batch key is signed once per batch, HMAC-SHA256(server key, DOMAIN + claims), and
 * never leaves the server; each object's tag is HMAC-SHA256(batch key, `<oid>.<size>`), under
 * the batch key imported once as a KeyObject. So a batch of a thousand objects costs one
 * signature of its claims and a thousand short MACs (about a microsecond each) instead of a
 * thousand signatures of whole payloads (createHmac costs about 8 µs a call with a raw key, most
 * of it spent preparing the key). Altering the claims changes the batch key, so every tag fails; another oid or size fails
 * its tag; the repository, operation and expiry are in the claims.
 *
 * Format 2 (`<payload>.<mac>`, one HMAC over JSON `[2, repoId, oid, size, op, subject, username,
 * orgId, exp, credentialVersion]`) is still accepted until its tokens have expired, and sign()
 * still writes it; format 1 had no credential version and is refused.
 */
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import type { Config } from '../ground/config.js';
import { loadOrCreateKey, parseKey } from '../ground/keys.js';
import type { TransferGrant } from '../domain/access/identity.js';

export interface TransferClaims extends TransferGrant {
  subject: string;
  username: string | null;
  orgId: string;
  /** The user's credential version at signing; null for anonymous and service callers. */
  credentialVersion?: number | null;
  /** Seconds since the epoch. */
  exp: number;
}

/** What every token of one batch shares: all but the object. */
export type BatchClaims = Omit<TransferClaims, 'oid' | 'size'>;

export class TransferTokenError extends Error {}

/** The payload as sign() writes it (the version first: 2). Only a payload with our MAC is parsed. */
type Payload = [
  version: number, repoId: string, oid: string, size: number, op: TransferGrant['op'], subject: string,
  username: string | null, orgId: string, exp: number, credentialVersion: number | null,
];
type BatchPayload = [version: 3, repoId: string, op: TransferGrant['op'], subject: string, username: string | null, orgId: string, exp: number, credentialVersion: number | null];

/**
 * Separates batch keys from format 2 MACs: both are HMACs under the server key, and format 2 MACs
 * are published (in tokens), so no format 2 payload (base64url, which has no NUL) may ever be
 * the input of a batch key.
 */
const BATCH_DOMAIN = 'pactum transfer batch key v3\0';
const OID = /^[0-9a-f]{64}$/;
const SIZE = /^(0|[1-9][0-9]{0,15})$/;
export function createTransferTokens(config: Config) {
  const raw = config.lfs.transferTokenSecret
    ? parseKey(config.lfs.transferTokenSecret, 'TRANSFER_TOKEN_SECRET')
    : loadOrCreateKey(config.dataDir, 'transfer-hmac', 32);
  // A KeyObject: createHmac with a raw Buffer re-imports the key on every call (several µs).
  const key = createSecretKey(raw);
  const mac = (payload: string) => createHmac('sha256', key).update(payload).digest();
  const batchKey = (claims: string) => mac(BATCH_DOMAIN + claims);
  /** Compares a base64url MAC as given with the expected bytes; false unless canonical and equal. */
  const macMatches = (signature: string, expected: Buffer) => {
    const given = Buffer.from(signature, 'base64url');
    // Node's decoder skips what is not base64url: only the canonical spelling of the MAC counts.
    if (given.toString('base64url') !== signature) throw new TransferTokenError('malformed transfer token');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };

  function verifyBatchToken(claims: string, oid: string, size: string, tag: string, now: number): TransferClaims {
    if (!claims || !OID.test(oid) || !SIZE.test(size) || !tag) throw new TransferTokenError('malformed transfer token');
    const expected = createHmac('sha256', batchKey(claims)).update(`${oid}.${size}`).digest();
    if (!macMatches(tag, expected)) throw new TransferTokenError('the transfer token is not valid');
    const [v, repoId, op, subject, username, orgId, exp, credentialVersion] = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')) as BatchPayload;
    if (v !== 3) throw new TransferTokenError('unknown transfer token version');
    if (exp * 1000 < now) throw new TransferTokenError('the transfer token has expired; request new actions');
    return { repoId, oid, size: Number(size), op, subject, username, orgId, exp, credentialVersion };
  }

  return {
    /** One format 2 token (one full signature). */
    sign(c: TransferClaims): string {
      const payload = Buffer.from(JSON.stringify([2, c.repoId, c.oid, c.size, c.op, c.subject, c.username, c.orgId, c.exp, c.credentialVersion ?? null])).toString('base64url');
      return `${payload}.${mac(payload).toString('base64url')}`;
    },
    /**
     * The signer of one batch's tokens (format 3): the batch key is signed here, once; each call
     * then costs a short MAC. Only well-formed oids and sizes are signed.
     */
    batchSigner(c: BatchClaims): (oid: string, size: number) => string {
      const claims = Buffer.from(JSON.stringify([3, c.repoId, c.op, c.subject, c.username, c.orgId, c.exp, c.credentialVersion ?? null] satisfies BatchPayload)).toString('base64url');
      // A KeyObject, imported once per batch: each object's MAC is then about a microsecond.
      const key = createSecretKey(batchKey(claims));
      return (oid, size) => {
        if (!OID.test(oid) || !Number.isSafeInteger(size) || size < 0) throw new Error(`batchSigner: no token for oid ${JSON.stringify(oid)} size ${size}`);
        const object = `${oid}.${size}`;
        return `${claims}.${object}.${createHmac('sha256', key).update(object).digest('base64url')}`;
      };
    },
    verify(token: string, now = Date.now()): TransferClaims {
      const parts = token.split('.');
      if (parts.length === 4) return verifyBatchToken(parts[0]!, parts[1]!, parts[2]!, parts[3]!, now);
      const [payload, signature] = parts;
      if (parts.length !== 2 || !payload || !signature) throw new TransferTokenError('malformed transfer token');
      if (!macMatches(signature, mac(payload))) throw new TransferTokenError('the transfer token is not valid');
      const [v, repoId, oid, size, op, subject, username, orgId, exp, credentialVersion] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Payload;
      if (v !== 2) throw new TransferTokenError('unknown transfer token version');
      if (exp * 1000 < now) throw new TransferTokenError('the transfer token has expired; request new actions');
      return { repoId, oid, size, op, subject, username, orgId, exp, credentialVersion };
    },
  };
}

export type TransferTokens = ReturnType<typeof createTransferTokens>;
