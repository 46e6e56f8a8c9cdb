/** Settings a running server records in its database, for the CLI that shares it. */
import type { Db } from './knex.js';

const PUBLIC_URL = 'public_url';

/** Recorded at every start: the URL (and so the token audience) of the server that last started. */
export async function recordServerUrl(db: Db, publicUrl: string): Promise<void> {
  await db('server_settings')
    .insert({ name: PUBLIC_URL, value: publicUrl, updated_at: new Date().toISOString() })
    .onConflict('name')
    .merge(['value', 'updated_at']);
}

export async function recordedServerUrl(db: Db): Promise<{ url: string; at: string } | null> {
  const row = (await db('server_settings').where({ name: PUBLIC_URL }).first()) as { value: string; updated_at: string } | undefined;
  return row ? { url: row.value, at: row.updated_at } : null;
}
