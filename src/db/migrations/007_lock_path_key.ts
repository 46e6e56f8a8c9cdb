import type { Knex } from 'knex';
import { lockPathKey } from '../lock-path-key.js';

/**
 * Lock paths may be 4,096 characters, more than PostgreSQL can put in a b-tree entry (about
 * 2.7 kB): uniqueness moves to the SHA-256 of the path. SQLite accepted the long key; PostgreSQL
 * answered such a lock with an error.
 */
export async function up(db: Knex) {
  await db.schema.alterTable('lfs_locks', (t) => {
    t.string('path_key', 64).nullable();
  });
  for (const row of await db<{ id: string; path: string }>('lfs_locks').select('id', 'path')) {
    await db('lfs_locks').where({ id: row.id }).update({ path_key: lockPathKey(row.path) });
  }
  await db.schema.alterTable('lfs_locks', (t) => {
    t.dropUnique(['repo_id', 'path']);
    t.unique(['repo_id', 'path_key']);
  });
}

export async function down(db: Knex) {
  await db.schema.alterTable('lfs_locks', (t) => {
    t.dropUnique(['repo_id', 'path_key']);
    t.unique(['repo_id', 'path']);
    t.dropColumn('path_key');
  });
}
