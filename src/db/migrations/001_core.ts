import type { Knex } from 'knex';

// Timestamps are ISO-8601 UTC strings: identical on SQLite and PostgreSQL, and they sort.
export async function up(db: Knex) {
  await db.schema.createTable('orgs', (t) => {
    t.string('id', 40).primary();
    t.string('name', 200).notNullable();
    t.string('slug', 63).notNullable().unique();
    t.string('created_at', 30).notNullable();
    t.string('updated_at', 30).notNullable();
  });
  await db.schema.createTable('users', (t) => {
    t.string('id', 40).primary();
    t.string('org_id', 40).notNullable().references('orgs.id');
    t.string('username', 64).notNullable().unique();
    t.string('password_hash', 200).notNullable();
    t.string('role', 20).notNullable();
    t.boolean('active').notNullable().defaultTo(true);
    t.string('created_at', 30).notNullable();
    t.string('updated_at', 30).notNullable();
    t.string('last_login_at', 30).nullable();
    t.index(['org_id', 'id']);
  });
}

export async function down(db: Knex) {
  await db.schema.dropTable('users');
  await db.schema.dropTable('orgs');
}
