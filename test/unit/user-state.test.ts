/**
 * Whether the user and org rows changed is asked at most once per request (auth/user-state.ts):
 * two lookups in one request ask once; requests that had all arrived before a question share its
 * answer; a request that arrives after the last question asks again and sees a change made before
 * it arrived.
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
  let request: { arrived: number } | undefined;
  const state = createUserState(reads, changes, () => request);
  return {
    state,
    asked,
    /** Another process commits a change to the user's role. */
    change(newRole: string) {
      role = newRole;
      version++;
    },
    /** A request arrives (a moment after whatever came before it). */
    begin: () => (request = { arrived: performance.now() }),
    /** Lookups are made for an earlier request again. */
    resume: (r: { arrived: number }) => (request = r),
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

it('lets the requests that arrived before a question share its answer', async () => {
  const f = fixture();
  const first = f.begin();
  const second = f.begin();
  f.resume(first);
  await f.state.get('usr_1');
  expect(f.asked.n).toBe(1);
  f.resume(second);
  await f.state.get('usr_1');
  await f.state.org('org_1');
  expect(f.asked.n).toBe(1);
  // A change, then a request that follows it: that request asks, and sees it.
  f.change('viewer');
  await new Promise((r) => setTimeout(r, 2));
  f.begin();
  expect((await f.state.get('usr_1'))?.role).toBe('viewer');
  expect(f.asked.n).toBe(2);
});

it('asks once for the requests read in one turn of the event loop, after they arrived', async () => {
  const f = fixture();
  const a = f.begin();
  const b = f.begin();
  f.change('viewer');
  const c = f.begin();
  // Three requests, their lookups begun in the same turn: one question, which sees the change.
  const rows = await Promise.all([a, b, c].map((r) => {
    f.resume(r);
    return f.state.get('usr_1');
  }));
  expect(f.asked.n).toBe(1);
  expect(rows.map((r) => r?.role)).toEqual(['viewer', 'viewer', 'viewer']);
});

it('reads the rows when the question fails, and asks again for the next request', async () => {
  const reads = {
    user: (id: string) => Promise.resolve({ id, org_id: 'org_1', username: 'u', role: 'member', active: 1, credential_version: 1 }),
    org: (id: string) => Promise.resolve({ id, slug: 'acme', name: 'Acme' }),
  } as unknown as PointReads;
  let failing = true;
  let asked = 0;
  let read = 0;
  const counted = { ...reads, user: (id: string) => (read++, reads.user(id)) };
  const changes: PrincipalChanges = {
    usable() {
      asked++;
      if (failing) throw new Error('database closed');
      return true;
    },
    subscribe() {},
    start() {},
    close: () => Promise.resolve(),
  };
  let request = { arrived: performance.now() };
  const state = createUserState(counted, changes, () => request);
  expect((await state.get('usr_1'))?.role).toBe('member');
  expect((await state.get('usr_1'))?.role).toBe('member');
  expect(read).toBe(2); // nothing served from memory while the question fails
  failing = false;
  await new Promise((r) => setTimeout(r, 2));
  request = { arrived: performance.now() };
  await state.get('usr_1');
  await state.get('usr_1');
  expect(asked).toBe(2);
  expect(read).toBe(3); // remembered once the question answers
});
