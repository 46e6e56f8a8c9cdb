import type { Knex } from 'knex';

// Only a SHA-256 of the cookie value is stored: a copy of the database opens no session.
export async function up(db: Knex) {
  await db.schema.createTable('sessions', (t) => {
    t.string('token_hash', 64).primary();
    t.string('user_id', 40).notNullable().references('users.id');
    t.string('created_at', 30).notNullable();
    t.string('expires_at', 30).notNullable();
    t.string('revoked_at', 30).nullable();
    t.index(['user_id']);
  });
}

export async function down(db: Knex) {
  await db.schema.dropTable('sessions');
}
