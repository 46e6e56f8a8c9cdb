/**
 * The current state of a token's user and of an org, needed on every authenticated request and by
 * the read tools, kept in memory so that a read tool's call reads no row: a user's row (role,
 * active, credential version, org) and an org's row, each remembered from its first read until it
 * changes. Every change drops it before the next request is served, wherever it was made (this
 * process, the CLI, another instance; db/principal-changes.ts says how), so a demotion,
 * deactivation, deletion or new password counts at the very next request. Only rows that exist
 * are remembered: an unknown id is asked again each time.
 */
import type { OrgRowSnapshot, PointReads, UserRowSnapshot } from '../db/point-reads.js';
import type { PrincipalChanges } from '../db/principal-changes.js';

/** Ids are short and printable; anything else names nothing (and PostgreSQL refuses a NUL). */
const plausibleId = (id: string) => id.length <= 64 && [...id].every((c) => c.charCodeAt(0) >= 0x20);

/** Beyond this many rows of a kind, memory starts afresh (a flood of distinct tokens cannot grow it). */
const MAX_ROWS = 100_000;

/**
 * `currentRequest`: the request being served (when it arrived), if any. On SQLite whether anything
 * changed is a PRAGMA that takes the database's shared lock (several microseconds, about 5% of a
 * read tool's CPU when asked once a request), so it is asked once per turn of the event loop, after
 * the turn's I/O: every request read in that turn waits for that one question. An answer serves
 * every request that had arrived before it was asked: a change that a request follows was
 * committed before the request was sent, hence before the question, which saw it. Outside a
 * request (the CLI, background work) it asks at every lookup.
 */
export function createUserState(reads: PointReads, changes: PrincipalChanges, currentRequest: () => { arrived: number } | undefined = () => undefined) {
  let askedAt = -Infinity;
  let answer = false;
  let asking: Promise<boolean> | null = null;
  const ask = () =>
    (asking ??= new Promise<boolean>((resolve) => {
      setImmediate(() => {
        // The time before asking: the question sees every commit made before then.
        const now = performance.now();
        asking = null;
        try {
          answer = changes.usable();
        } catch {
          answer = false;
        }
        askedAt = now;
        resolve(answer);
      });
    }));
  const usable = (): boolean | Promise<boolean> => {
    const request = currentRequest();
    if (!request) return changes.usable();
    return request.arrived > askedAt ? ask() : answer;
  };
  const users = new Map<string, Readonly<UserRowSnapshot>>();
  const orgs = new Map<string, Readonly<OrgRowSnapshot>>();
  // Moves with every change heard: a read that began before a change does not store what it read.
  let generation = 0;
  changes.subscribe((id) => {
    generation++;
    if (id === undefined) {
      users.clear();
      orgs.clear();
    } else {
      users.delete(id);
      orgs.delete(id);
    }
  });

  async function remembered<T extends object>(rows: Map<string, Readonly<T>>, id: string, read: (id: string) => Promise<T | undefined>): Promise<Readonly<T> | undefined> {
    if (!plausibleId(id)) return undefined;
    const now = usable();
    if (!(typeof now === 'boolean' ? now : await now)) return read(id);
    const known = rows.get(id);
    if (known) return known;
    const began = generation;
    const row = await read(id);
    if (row && began === generation) {
      if (rows.size >= MAX_ROWS) rows.clear();
      rows.set(id, Object.freeze(row));
    }
    return row;
  }

  return {
    get: (userId: string) => remembered(users, userId, (id) => reads.user(id)),
    org: (orgId: string) => remembered(orgs, orgId, (id) => reads.org(id)),
    async orgExists(orgId: string): Promise<boolean> {
      return (await remembered(orgs, orgId, (id) => reads.org(id))) !== undefined;
    },
    /** Once the database is migrated: from then on other instances' changes are heard. */
    start: () => changes.start(),
    close: () => changes.close(),
  };
}

export type UserState = ReturnType<typeof createUserState>;
