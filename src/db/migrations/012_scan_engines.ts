import type { Knex } from 'knex';

/**
 * Which engine checked a scan's pages, what each page could not evaluate, and room in
 * scans.status for "completed_with_errors" (21 characters; PostgreSQL enforces varchar(12)).
 */
export async function up(db: Knex) {
  await db.schema.alterTable('scans', (t) => {
    t.string('engine', 10).nullable();
  });
  await db.schema.alterTable('scan_pages', (t) => {
    t.text('not_evaluated').nullable(); // JSON NotEvaluated[]
  });
  // SQLite does not enforce varchar lengths, and altering a column there rebuilds the table.
  if (isPg(db)) await db.raw('ALTER TABLE scans ALTER COLUMN status TYPE varchar(24)');
}

export async function down(db: Knex) {
  if (isPg(db)) await db.raw('ALTER TABLE scans ALTER COLUMN status TYPE varchar(12)');
  await db.schema.alterTable('scan_pages', (t) => t.dropColumn('not_evaluated'));
  await db.schema.alterTable('scans', (t) => t.dropColumn('engine'));
}

/** The dialect, from knex's own client config (typed loosely by knex). */
const isPg = (db: Knex) => (db.client as { config: { client?: unknown } }).config.client === 'pg';
