import type { Knex } from 'knex';

/**
 * Links to a report page for people without an account (dashboard_share_report): the signed URL
 * names its row, which says which scan it shows, until when, and whether it was revoked. No
 * foreign key on the scan: a link whose scan is gone is refused when it is opened.
 */
export async function up(db: Knex) {
  await db.schema.createTable('report_shares', (t) => {
    t.string('id', 40).primary();
    t.string('scan_id', 40).notNullable();
    t.string('org_id', 40).notNullable();
    t.string('created_by', 100).notNullable();
    t.string('created_at', 32).notNullable();
    t.string('expires_at', 32).notNullable();
    t.string('revoked_at', 32).nullable();
    t.index(['scan_id']);
  });
}

export async function down(db: Knex) {
  await db.schema.dropTable('report_shares');
}
