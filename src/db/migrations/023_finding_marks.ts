import type { Knex } from 'knex';

/**
 * Reviewers' marks, attached to a finding's fingerprint within an organization (not to one scan):
 * the mark follows the finding into every later scan. One row per finding holds where it stands
 * now; each change is also an audit row (audit_log), which keeps the history. And scans that
 * check a given list of pages (a rescan verifying fixes) and the scan they verify.
 */
export async function up(db: Knex) {
  await db.schema.createTable('finding_marks', (t) => {
    t.string('org_id', 40).notNullable();
    t.string('fingerprint', 32).notNullable();
    /** The finding as last marked, for people reading the table: the page, the rule, the element. */
    t.string('page_url', 2000).notNullable();
    t.string('code', 100).notNullable();
    t.text('selector').notNullable();
    /** confirmed | false_positive | accepted, or null (only a review outcome). */
    t.string('mark', 20).nullable();
    t.text('reason').nullable();
    t.string('expires_at', 32).nullable();
    t.string('marked_by', 100).nullable();
    t.string('marked_at', 32).nullable();
    /** pass | fail: the outcome of a needs-review finding. */
    t.string('review_outcome', 10).nullable();
    t.text('review_note').nullable();
    t.string('reviewed_by', 100).nullable();
    t.string('reviewed_at', 32).nullable();
    /** The scan the last change was made on. */
    t.string('scan_id', 40).notNullable();
    t.primary(['org_id', 'fingerprint']);
    t.index(['org_id', 'page_url']);
  });
  await db.schema.alterTable('scans', (t) => {
    /** JSON array: the pages the scan checks, and only those (no crawl); null for a crawl from site_url. */
    t.text('page_urls').nullable();
    /** The scan whose findings this one verifies (dashboard_verify_fixes). */
    t.string('baseline_scan_id', 40).nullable();
  });
}

export async function down(db: Knex) {
  await db.schema.alterTable('scans', (t) => {
    t.dropColumn('baseline_scan_id');
    t.dropColumn('page_urls');
  });
  await db.schema.dropTable('finding_marks');
}
