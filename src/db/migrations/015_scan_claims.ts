import type { Knex } from 'knex';

/**
 * Fair scheduling of scans: which queue job claimed a scan (so a retried job runs its own scan
 * again and the dead-letter handler fails the right one), and the indexes the fair choice reads
 * per org (scans running, the last start).
 */
export async function up(db: Knex) {
  await db.schema.alterTable('scans', (t) => {
    t.string('job_id', 64).nullable();
    t.index(['job_id']);
    t.index(['org_id', 'status']);
    t.index(['org_id', 'started_at']);
  });
}

export async function down(db: Knex) {
  await db.schema.alterTable('scans', (t) => {
    t.dropIndex(['org_id', 'started_at']);
    t.dropIndex(['org_id', 'status']);
    t.dropIndex(['job_id']);
    t.dropColumn('job_id');
  });
}
