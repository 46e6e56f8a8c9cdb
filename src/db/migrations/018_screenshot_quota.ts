import type { Knex } from 'knex';

/**
 * Screenshots are counted per org against SCREENSHOTS_BYTES_PER_ORG and expire after
 * SCREENSHOTS_RETENTION_DAYS: each row names its org (taken from its scan for rows already there),
 * and both the quota's sum and the expiry's scan by age have an index.
 */
export async function up(db: Knex) {
  await db.schema.alterTable('scan_screenshots', (t) => {
    t.string('org_id', 40).nullable();
  });
  await db('scan_screenshots').update({ org_id: db('scans').select('org_id').where('scans.id', db.ref('scan_screenshots.scan_id')) });
  await db.schema.alterTable('scan_screenshots', (t) => {
    t.index(['org_id']);
    t.index(['created_at']);
  });
}

export async function down(db: Knex) {
  await db.schema.alterTable('scan_screenshots', (t) => {
    t.dropIndex(['created_at']);
    t.dropIndex(['org_id']);
    t.dropColumn('org_id');
  });
}
