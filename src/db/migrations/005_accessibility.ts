import type { Knex } from 'knex';

export async function up(db: Knex) {
  await db.schema.createTable('scans', (t) => {
    t.string('id', 40).primary();
    t.string('org_id', 40).notNullable().references('orgs.id');
    t.string('site_id', 40).notNullable().references('sites.id');
    t.string('site_url', 2000).notNullable();
    t.string('standard', 10).notNullable();
    t.string('scan_mode', 10).notNullable();
    t.integer('max_pages').notNullable();
    t.integer('concurrency').notNullable();
    t.text('jurisdictions').notNullable(); // JSON array
    t.string('status', 12).notNullable();
    t.integer('pages_scanned').notNullable().defaultTo(0);
    t.integer('total_pages').nullable();
    t.integer('total_issues').nullable();
    t.text('summary').nullable(); // JSON ReportSummary, once completed
    t.text('error').nullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.string('created_at', 30).notNullable();
    t.string('started_at', 30).nullable();
    t.string('finished_at', 30).nullable();
    t.string('last_updated', 30).notNullable();
    t.index(['org_id', 'id']);
    t.index(['site_id', 'id']);
    t.index(['status']);
  });
  // One row per page, written as each page finishes: progress and the report read them fresh.
  await db.schema.createTable('scan_pages', (t) => {
    t.string('scan_id', 40).notNullable().references('scans.id');
    t.integer('seq').notNullable();
    t.string('url', 2000).notNullable();
    t.text('title').nullable();
    t.integer('issue_count').notNullable();
    t.text('error').nullable();
    t.text('issues').notNullable(); // JSON Issue[]
    t.text('style').nullable(); // JSON style statistics, for brand scoring
    t.primary(['scan_id', 'seq']);
  });
  await db.schema.createTable('brand_guidelines', (t) => {
    t.string('org_id', 40).primary().references('orgs.id');
    t.text('guideline').notNullable(); // JSON BrandGuideline
    t.string('updated_at', 30).notNullable();
  });
  await db.schema.createTable('brand_scores', (t) => {
    t.string('scan_id', 40).primary().references('scans.id');
    t.string('org_id', 40).notNullable();
    t.string('site_url', 2000).notNullable();
    t.string('computed_at', 30).notNullable();
    t.text('score').notNullable(); // JSON BrandScore
    t.index(['org_id', 'computed_at']);
  });
  await db.schema.createTable('proposals', (t) => {
    t.string('id', 100).primary();
    t.string('source', 2000).notNullable();
    t.string('detected_at', 30).notNullable();
    t.string('type', 30).notNullable();
    t.string('affected_regulation_id', 100).nullable();
    t.text('summary').notNullable();
    t.text('proposed_changes').notNullable(); // JSON ProposedChange[]
    t.string('status', 20).notNullable();
    t.string('imported_at', 30).notNullable();
    t.index(['status', 'detected_at']);
  });
}

export async function down(db: Knex) {
  for (const t of ['proposals', 'brand_scores', 'brand_guidelines', 'scan_pages', 'scans']) await db.schema.dropTable(t);
}
