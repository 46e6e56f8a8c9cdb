/** What a verified token's claims become, and how a claim that makes no sense is refused. */
import { describe, expect, it } from 'vitest';
import { TokenError, claimsOf } from '../../src/auth/jwt.js';
import { credentialsStand } from '../../src/auth/security.js';

describe('claimsOf', () => {
  it('takes the role and the scopes a token names', () => {
    const claims = claimsOf({ sub: 'usr_1', orgId: 'org_1', role: 'member', scopes: ['admin.system', 'no.such'] });
    expect(claims).toMatchObject({ sub: 'usr_1', orgId: 'org_1', role: 'member' });
    expect(claims.permissions.has('admin.system')).toBe(true);
  });

  it('names an unknown role as the token gives it: a string as it is, anything else as JSON', () => {
    const refusal = (role: unknown) => {
      try {
        claimsOf({ sub: 'usr_1', orgId: 'org_1', role });
      } catch (err) {
        expect(err).toBeInstanceOf(TokenError);
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(refusal('superuser')).toBe('unknown role superuser');
    // A role given as a list is not the role it lists (String() would have said "unknown role org_admin").
    expect(refusal(['org_admin'])).toBe('unknown role ["org_admin"]');
    expect(refusal({ name: 'org_admin' })).toBe('unknown role {"name":"org_admin"}');
    expect(refusal(7)).toBe('unknown role 7');
    expect(refusal(null)).toBe('unknown role null');
  });
});

describe('the credential version a token carries', () => {
  it('is read as a count, and anything else is refused', () => {
    expect(claimsOf({ sub: 'usr_1', orgId: 'org_1', credentialVersion: 3 }).credentialVersion).toBe(3);
    expect(claimsOf({ sub: 'usr_1', orgId: 'org_1' }).credentialVersion).toBeNull();
    for (const bad of [-1, 1.5, '3', null, [3]]) {
      expect(() => claimsOf({ sub: 'usr_1', orgId: 'org_1', credentialVersion: bad }), JSON.stringify(bad)).toThrow('the token has an invalid credentialVersion');
    }
  });

  it('stands against the user\'s version: equal when named; when not named, ours only at the initial 0, an identity provider\'s always', () => {
    expect(credentialsStand(2, 2, true)).toBe(true);
    expect(credentialsStand(1, 2, true)).toBe(false);
    expect(credentialsStand(3, 2, false)).toBe(false);
    expect(credentialsStand(null, 0, true)).toBe(true);
    expect(credentialsStand(null, 1, true)).toBe(false);
    expect(credentialsStand(null, 5, false)).toBe(true);
  });
});
