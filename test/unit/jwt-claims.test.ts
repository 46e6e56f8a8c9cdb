/** What a verified token's claims become, and how a claim that makes no sense is refused. */
import { describe, expect, it } from 'vitest';
import { TokenError, claimsOf } from '../../src/auth/jwt.js';

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
