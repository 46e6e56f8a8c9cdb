import type { Knex } from 'knex';

/**
 * Who may append to a resumable upload right now. In the database, not in memory, so that two
 * instances behind a load balancer cannot both append to the same upload.
 */
export async function up(db: Knex) {
  await db.schema.createTable('upload_leases', (t) => {
    t.string('key', 255).primary();
    t.string('holder', 40).notNullable();
    t.bigInteger('expires_at').notNullable(); // epoch ms
  });
}

export async function down(db: Knex) {
  await db.schema.dropTable('upload_leases');
}
