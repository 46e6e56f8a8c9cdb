import type { Knex } from 'knex';

/**
 * A reviewer's assessment of one WCAG success criterion for one scan's Accessibility Conformance
 * Report: the conformance level and the remarks, which stand in the ACR in place of the level the
 * findings give. One row per org, scan and criterion holds the assessment as it stands now; each
 * change is also an audit row (audit_log), which keeps the history.
 */
export async function up(db: Knex) {
  await db.schema.createTable('acr_assessments', (t) => {
    t.string('org_id', 40).notNullable();
    t.string('scan_id', 40).notNullable();
    /** The WCAG criterion, e.g. 1.4.3. */
    t.string('criterion', 10).notNullable();
    /** A VPAT 2.5 conformance term: Supports, Partially Supports, Does Not Support, Not Applicable, Not Evaluated. */
    t.string('conformance', 20).notNullable();
    t.text('remarks').notNullable();
    t.string('author', 100).notNullable();
    t.string('assessed_at', 32).notNullable();
    t.primary(['org_id', 'scan_id', 'criterion']);
  });
}

export async function down(db: Knex) {
  await db.schema.dropTable('acr_assessments');
}
