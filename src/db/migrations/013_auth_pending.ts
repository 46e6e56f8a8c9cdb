import type { Knex } from 'knex';

/**
 * Password checks in flight, per throttle key: an attempt is counted before its password is
 * verified, so that guesses sent at once cannot all pass the throttle's check.
 */
export async function up(db: Knex) {
  await db.schema.alterTable('auth_failures', (t) => {
    t.integer('pending').notNullable().defaultTo(0);
  });
}

export async function down(db: Knex) {
  await db.schema.alterTable('auth_failures', (t) => {
    t.dropColumn('pending');
  });
}
