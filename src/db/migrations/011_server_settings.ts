import type { Knex } from 'knex';

/**
 * What a running server records for the CLI that shares its database: its public URL, from
 * which `pactum token` takes the audience (and `pactum repo create` the endpoint it prints).
 */
export async function up(db: Knex) {
  await db.schema.createTable('server_settings', (t) => {
    t.string('name', 64).primary();
    t.text('value').notNullable();
    t.string('updated_at', 32).notNullable();
  });
}

export async function down(db: Knex) {
  await db.schema.dropTable('server_settings');
}
