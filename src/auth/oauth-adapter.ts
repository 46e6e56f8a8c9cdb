/**
 * oidc-provider's storage through knex (SQLite or PostgreSQL): one row per model instance in
 * `oauth_models`, so that instances sharing a database redeem each other's codes and honour each
 * other's revocations. Rows past their expiry are never returned and are swept as they are met.
 */
import type { Db } from '../db/knex.js';

export interface OAuthPayload {
  grantId?: string;
  uid?: string;
  userCode?: string;
  accountId?: string;
  consumed?: number;
  [key: string]: unknown;
}

interface Row {
  payload: string;
  consumed_at: string | null;
  expires_at: string | null;
}

const now = () => new Date().toISOString();

/**
 * The adapter class oidc-provider instantiates per model name. Registered clients (Dynamic
 * Client Registration) expire once unused for `clientIdleSeconds`: each use moves their end.
 */
export function knexAdapter(db: Db, opts: { clientIdleSeconds: number }) {
  const idleMs = opts.clientIdleSeconds * 1000;
  return class KnexAdapter {
    constructor(readonly model: string) {}

    private rows() {
      return db('oauth_models').where({ model: this.model });
    }

    async upsert(id: string, payload: OAuthPayload, expiresIn?: number): Promise<void> {
      const row = {
        model: this.model,
        id,
        payload: JSON.stringify(payload),
        grant_id: payload.grantId ?? null,
        uid: payload.uid ?? null,
        user_code: payload.userCode ?? null,
        account_id: payload.accountId ?? null,
        expires_at: typeof expiresIn === 'number' ? new Date(Date.now() + expiresIn * 1000).toISOString() : this.model === 'Client' ? new Date(Date.now() + idleMs).toISOString() : null,
      };
      await db('oauth_models').insert({ ...row, consumed_at: null }).onConflict(['model', 'id']).merge(row);
    }

    private async one(where: Record<string, string>): Promise<OAuthPayload | undefined> {
      const row: Row | undefined = await this.rows().where(where).first('payload', 'consumed_at', 'expires_at');
      if (!row) return undefined;
      if (row.expires_at && row.expires_at <= now()) {
        await this.rows().where(where).delete();
        return undefined;
      }
      const payload = JSON.parse(row.payload) as OAuthPayload;
      return row.consumed_at ? { ...payload, consumed: Math.floor(Date.parse(row.consumed_at) / 1000) } : payload;
    }

    async find(id: string) {
      const found = await this.one({ id });
      // A registered client in use stays (moved at most once a day, not at every request).
      if (found && this.model === 'Client') {
        const until = new Date(Date.now() + idleMs).toISOString();
        const dayAgo = new Date(Date.now() + idleMs - 86_400_000).toISOString();
        await this.rows().where({ id }).where('expires_at', '<', dayAgo).update({ expires_at: until });
      }
      return found;
    }

    findByUid(uid: string) {
      return this.one({ uid });
    }

    findByUserCode(userCode: string) {
      return this.one({ user_code: userCode });
    }

    async consume(id: string): Promise<void> {
      await this.rows().where({ id }).update({ consumed_at: now() });
    }

    async destroy(id: string): Promise<void> {
      await this.rows().where({ id }).delete();
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await this.rows().where({ grant_id: grantId }).delete();
    }
  };
}

/** Deletes rows past their expiry (called now and then; reads ignore them anyway). */
export async function sweepExpired(db: Db): Promise<number> {
  return db('oauth_models').where('expires_at', '<=', now()).delete();
}
