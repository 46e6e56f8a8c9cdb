/**
 * Whether the user and org rows changed is asked once per request (auth/user-state.ts): two
 * lookups in one request ask once; the next request asks again and sees a change made between.
 */
import { expect, it } from 'vitest';
import { createUserState } from '../../src/auth/user-state.js';
import type { PointReads } from '../../src/db/point-reads.js';
import type { PrincipalChanges } from '../../src/db/principal-changes.js';

function fixture() {
  let version = 1;
  let seen = 1;
  const asked = { n: 0 };
  const subscribers: ((id?: string) => void)[] = [];
  const changes: PrincipalChanges = {
    usable() {
      asked.n++;
      if (version !== seen) {
        seen = version;
        for (const s of subscribers) s();
      }
      return true;
    },
    subscribe: (f) => void subscribers.push(f),
    start() {},
    close: () => Promise.resolve(),
  };
  let role = 'member';
  const reads = {
    user: (id: string) => Promise.resolve({ id, org_id: 'org_1', username: 'u', role, active: 1, credential_version: 1 }),
    org: (id: string) => Promise.resolve({ id, slug: 'acme', name: 'Acme' }),
  } as unknown as PointReads;
  let request: object | undefined;
  const state = createUserState(reads, changes, () => request);
  return {
    state,
    asked,
    /** Another process commits a change to the user's role. */
    change(newRole: string) {
      role = newRole;
      version++;
    },
    begin: () => (request = {}),
  };
}

it('asks whether anything changed once per request, for its user and its org alike', async () => {
  const f = fixture();
  f.begin();
  await f.state.get('usr_1');
  await f.state.org('org_1');
  await f.state.get('usr_1');
  expect(f.asked.n).toBe(1);
  f.begin();
  await f.state.get('usr_1');
  await f.state.org('org_1');
  expect(f.asked.n).toBe(2);
});

it('sees a change committed between two requests at the second', async () => {
  const f = fixture();
  f.begin();
  expect((await f.state.get('usr_1'))?.role).toBe('member');
  f.change('viewer');
  // Still the same request: it began before the change.
  expect((await f.state.get('usr_1'))?.role).toBe('member');
  f.begin();
  expect((await f.state.get('usr_1'))?.role).toBe('viewer');
});

it('asks at every lookup outside a request (the CLI, background work)', async () => {
  const f = fixture();
  await f.state.get('usr_1');
  await f.state.org('org_1');
  expect(f.asked.n).toBe(2);
});
