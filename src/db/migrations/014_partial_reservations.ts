import type { Knex } from 'knex';

/**
 * Resumable uploads under a quota: one row per unfinished tus upload, with the size its transfer
 * token declares and when it lapses (epoch ms, moved by each append), counted per repository and
 * per org (objects/partial-quota.ts). And personal tokens of users deactivated before deactivation
 * revoked them: revoked now, so that reactivating such a user brings none of them back.
 */
export async function up(db: Knex) {
  await db.schema.createTable('lfs_partial_reservations', (t) => {
    t.string('repo_id', 40).notNullable();
    t.string('oid', 64).notNullable();
    t.string('org_id', 40).notNullable();
    t.bigInteger('size').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.primary(['repo_id', 'oid']);
    t.index(['org_id', 'expires_at']);
  });
  await db('personal_tokens')
    .whereNull('revoked_at')
    .whereIn('user_id', db('users').where({ active: false }).select('id'))
    .update({ revoked_at: new Date().toISOString() });
}

export async function down(db: Knex) {
  await db.schema.dropTable('lfs_partial_reservations');
}
