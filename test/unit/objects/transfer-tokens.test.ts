/**
 * Transfer tokens of a batch (format 3): one signature per batch, a short MAC per object. Each
 * token grants its own object, size, operation and repository only, until its expiry, and any
 * alteration fails.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../../src/ground/config.js';
import { createTransferTokens, type BatchClaims } from '../../../src/objects/transfer-tokens.js';

const tokensWith = (secret: Buffer) => createTransferTokens({ dataDir: '/nonexistent', lfs: { transferTokenSecret: secret.toString('hex') } } as unknown as Config);
const secret = randomBytes(32);
const tokens = tokensWith(secret);
const oidOf = (s: string) => createHash('sha256').update(s).digest('hex');
const a = oidOf('a');
const b = oidOf('b');
const now = Date.now();
const claims: BatchClaims = { repoId: 'rep_one', op: 'download', subject: 'usr_wally', username: 'wally', orgId: 'org_acme', credentialVersion: 4, exp: Math.floor(now / 1000) + 600 };
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

describe('a batch token\'s tag', () => {
  it('is HMAC-SHA256 of `<oid>.<size>` under the batch key, itself HMAC-SHA256 of the claims under the server key', () => {
    const sign = tokens.batchSigner(claims);
    for (const [oid, size] of [[a, 0], [b, 9007199254740991], [a, 1234]] as const) {
      const [payload, , , tag] = sign(oid, size).split('.') as [string, string, string, string];
      const batchKey = createHmac('sha256', secret).update(`pactum transfer batch key v3\0${payload}`).digest();
      expect(tag).toBe(createHmac('sha256', batchKey).update(`${oid}.${size}`).digest('base64url'));
    }
  });
});

describe('batch transfer tokens', () => {
  const sign = tokens.batchSigner(claims);
  const tokenA = sign(a, 1234);
  const [payload, oid, size, tag] = tokenA.split('.') as [string, string, string, string];

  it('grant each object of the batch its own transfer, with the batch claims', () => {
    expect(tokens.verify(tokenA, now)).toEqual({ ...claims, oid: a, size: 1234 });
    expect(tokens.verify(sign(b, 0), now)).toEqual({ ...claims, oid: b, size: 0 });
    // One batch signature: the claims segment is the same for every object.
    expect(sign(b, 0).split('.')[0]).toBe(payload);
    expect([oid, size]).toEqual([a, '1234']);
  });

  it('refuse another oid, another size, a tag moved between objects, and altered claims', () => {
    const tagB = sign(b, 1234).split('.')[3]!;
    const claimsOf = (change: (c: unknown[]) => void) => {
      const c = JSON.parse(Buffer.from(payload, 'base64url').toString()) as unknown[];
      change(c);
      return b64(c);
    };
    const refused = [
      `${payload}.${b}.${size}.${tag}`, // another oid
      `${payload}.${oid}.1235.${tag}`, // another size
      `${payload}.${oid}.01234.${tag}`, // the same size spelt otherwise
      `${payload}.${oid}.${size}.${tagB}`, // another object's tag
      `${claimsOf((c) => (c[1] = 'rep_other'))}.${oid}.${size}.${tag}`, // another repository
      `${claimsOf((c) => (c[2] = 'upload'))}.${oid}.${size}.${tag}`, // another operation
      `${claimsOf((c) => (c[3] = 'usr_mallory'))}.${oid}.${size}.${tag}`, // another user
      `${claimsOf((c) => (c[6] = Number(c[6]) + 86400))}.${oid}.${size}.${tag}`, // a later expiry
      `${claimsOf((c) => (c[7] = 5))}.${oid}.${size}.${tag}`, // another credential version
      `${payload}.${oid}.${size}.${tag.slice(0, -1)}${tag.endsWith('A') ? 'B' : 'A'}`, // tag altered
      `${payload}.${oid}.${size}.${tag.slice(0, -2)}`, // tag truncated
      `${payload}.${oid}.${size}.${Buffer.alloc(32).toString('base64url')}`, // tag of zeros
      `${payload}.${oid}.${size}.`, // no tag
      `${payload}.${oid}.${size}.${tag}.${tag}`, // five segments
      `${payload}.${oid}.${size}`, // three segments
      tokensWith(randomBytes(32)).batchSigner(claims)(a, 1234), // another server's key
    ];
    for (const t of refused) expect(() => tokens.verify(t, now), t).toThrow(/not valid|malformed/);
  });

  it('refuse the batch key published as a format 2 MAC, and a format 2 payload under a batch tag', () => {
    // A format 2 token's MAC is HMAC(server key, payload): were a batch key computed over the same
    // input, its tokens would hand out the batch key. The domain prefix keeps the inputs apart.
    const v2 = tokens.sign({ ...claims, oid: a, size: 1234 });
    const [v2payload, v2mac] = v2.split('.') as [string, string];
    const forged = `${v2payload}.${a}.1234.${createHmac('sha256', Buffer.from(v2mac, 'base64url')).update(`${a}.1234`).digest('base64url')}`;
    expect(() => tokens.verify(forged, now)).toThrow(/not valid/);
    expect(() => tokens.verify(`${v2payload}.${tag}`, now)).toThrow(/not valid/);
  });

  it('expire with their batch', () => {
    const expired = tokens.batchSigner({ ...claims, exp: Math.floor(now / 1000) - 1 })(a, 1234);
    expect(() => tokens.verify(expired, now)).toThrow(/expired/);
    expect(() => tokens.verify(tokenA, (claims.exp + 1) * 1000)).toThrow(/expired/);
  });

  it('are signed for well-formed objects only', () => {
    for (const [o, s] of [[a.toUpperCase(), 1], [`${a}0`, 1], ['', 1], [a, -1], [a, 1.5], [a, 2 ** 53]] as const) expect(() => sign(o, s)).toThrow();
  });

  it('leave format 2 tokens valid until they expire', () => {
    const v2 = tokens.sign({ ...claims, oid: a, size: 1234 });
    expect(tokens.verify(v2, now)).toEqual({ ...claims, oid: a, size: 1234 });
  });
});
