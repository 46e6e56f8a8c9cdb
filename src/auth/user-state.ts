/**
 * Whether a token's user still exists and is active, read on every authenticated request. The
 * answer is kept for a second: a change made through this process drops it at once; another
 * instance (or the CLI) sees it within that second. That keeps the bearer check off the
 * database on the hot path while a deactivated user loses access within a second everywhere.
 */
import type { Db } from '../db/knex.js';
import { findUserById, type UserRow } from '../db/users.js';

export function createUserState(db: Db, ttlMs = 1000) {
  const cache = new Map<string, { user: UserRow | undefined; until: number }>();
  return {
    async get(userId: string): Promise<UserRow | undefined> {
      const hit = cache.get(userId);
      if (hit && hit.until > Date.now()) return hit.user;
      const user = await findUserById(db, userId);
      if (cache.size >= 10_000) cache.clear();
      cache.set(userId, { user, until: Date.now() + ttlMs });
      return user;
    },
    forget(userId: string) {
      cache.delete(userId);
    },
  };
}

export type UserState = ReturnType<typeof createUserState>;
