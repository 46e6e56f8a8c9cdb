import type { Knex } from 'knex';

/**
 * A per-user credential version, bumped by a password change, a role change, deactivation and a
 * personal token's revocation. Sessions, cached Basic credentials and transfer tokens carry the
 * version they were issued under and die when it moves. Personal tokens gain an optional expiry.
 */
export async function up(db: Knex) {
  await db.schema.alterTable('users', (t) => {
    t.integer('credential_version').notNullable().defaultTo(0);
  });
  await db.schema.alterTable('sessions', (t) => {
    t.integer('credential_version').notNullable().defaultTo(0);
  });
  await db.schema.alterTable('personal_tokens', (t) => {
    t.string('expires_at', 30).nullable();
    t.index(['user_id']);
  });
}

export async function down(db: Knex) {
  await db.schema.alterTable('personal_tokens', (t) => {
    t.dropIndex(['user_id']);
    t.dropColumn('expires_at');
  });
  await db.schema.alterTable('sessions', (t) => {
    t.dropColumn('credential_version');
  });
  await db.schema.alterTable('users', (t) => {
    t.dropColumn('credential_version');
  });
}
