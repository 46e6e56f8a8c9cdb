/**
 * The current state of a token's user and the existence of a token's org, read on every
 * authenticated request. There is no time-to-live: a user's row is one primary-key lookup (a few
 * microseconds on SQLite's read connection, db/point-reads.ts; one round trip on PostgreSQL), so a demotion,
 * deactivation or deletion made by any instance or by the CLI counts at the very next request.
 * Orgs are never deleted, so an org once seen is remembered; an unknown one is asked again.
 */
import type { PointReads, UserRowSnapshot } from '../db/point-reads.js';

/** Ids are short and printable; anything else names nothing (and PostgreSQL refuses a NUL). */
const plausibleId = (id: string) => id.length <= 64 && [...id].every((c) => c.charCodeAt(0) >= 0x20);

export function createUserState(reads: PointReads) {
  const knownOrgs = new Set<string>();
  return {
    async get(userId: string): Promise<UserRowSnapshot | undefined> {
      if (!plausibleId(userId)) return undefined;
      return reads.user(userId);
    },
    async orgExists(orgId: string): Promise<boolean> {
      if (knownOrgs.has(orgId)) return true;
      if (!plausibleId(orgId)) return false;
      const row = await reads.org(orgId);
      if (!row) return false;
      if (knownOrgs.size >= 100_000) knownOrgs.clear();
      knownOrgs.add(orgId);
      return true;
    },
  };
}

export type UserState = ReturnType<typeof createUserState>;
