import type { Knex } from 'knex';

/**
 * Failed password checks, counted per (username, address), per address and per username, so
 * that guessing is throttled across every instance that shares the database. Keys are hashed:
 * a username field sometimes holds a mistyped password.
 */
export async function up(db: Knex) {
  await db.schema.createTable('auth_failures', (t) => {
    t.string('key', 80).primary();
    t.integer('failures').notNullable();
    t.bigInteger('last_at').notNullable(); // epoch ms of the latest failure
    t.bigInteger('blocked_until').notNullable(); // epoch ms; 0: not blocked
    t.index(['last_at']);
  });
}

export async function down(db: Knex) {
  await db.schema.dropTable('auth_failures');
}
