import type { Knex } from 'knex';

/**
 * Screenshots of failing elements: the image bytes live in the object store's backend (a
 * namespace of their own, `screenshots/`), the rows say which scan each belongs to, so that
 * only callers who may read that scan's report can read them, and they go with the scan.
 */
export async function up(db: Knex) {
  await db.schema.createTable('scan_screenshots', (t) => {
    t.string('id', 32).primary();
    t.string('scan_id', 40).notNullable().references('scans.id');
    t.string('mime', 32).notNullable();
    t.integer('width').notNullable();
    t.integer('height').notNullable();
    t.integer('bytes').notNullable();
    t.string('created_at', 32).notNullable();
    t.index(['scan_id']);
  });
}

export async function down(db: Knex) {
  await db.schema.dropTable('scan_screenshots');
}
