import type { Knex } from 'knex';

export async function up(db: Knex) {
  // Client secrets are stored encrypted (AES-256-GCM); the preview is kept beside them so a read
  // never needs to decrypt.
  await db.schema.createTable('service_connections', (t) => {
    t.string('org_id', 40).notNullable().references('orgs.id');
    t.string('service_id', 20).notNullable();
    t.string('url', 2000).notNullable();
    t.string('client_id', 500).notNullable();
    t.text('secret_ciphertext').nullable();
    t.string('secret_preview', 20).nullable();
    t.string('created_at', 30).notNullable();
    t.string('updated_at', 30).notNullable();
    t.primary(['org_id', 'service_id']);
  });
  await db.schema.createTable('audit_log', (t) => {
    t.string('id', 40).primary();
    t.string('at', 30).notNullable();
    t.string('request_id', 40).nullable();
    t.string('subject', 100).notNullable();
    t.string('org_id', 40).notNullable();
    t.string('tool', 100).notNullable();
    t.text('arguments').notNullable();
    t.string('outcome', 40).notNullable();
    t.text('message').nullable();
    t.integer('duration_ms').notNullable();
    t.index(['org_id', 'at']);
  });
  await db.schema.createTable('sites', (t) => {
    t.string('id', 40).primary();
    t.string('org_id', 40).notNullable().references('orgs.id');
    t.string('url', 2000).notNullable();
    t.string('created_at', 30).notNullable();
    t.unique(['org_id', 'url']);
  });
  await db.schema.createTable('coordinated_prs', (t) => {
    t.string('id', 40).primary();
    t.string('org_id', 40).notNullable().references('orgs.id');
    t.string('team_id', 100).nullable();
    t.string('created_by', 100).notNullable();
    t.string('status', 20).notNullable();
    t.text('summary').notNullable();
    t.string('wcag_criterion', 20).nullable();
    t.string('created_at', 30).notNullable();
    t.index(['org_id', 'id']);
  });
  await db.schema.createTable('coordinated_pr_legs', (t) => {
    t.string('id', 40).primary();
    t.string('coordinated_pr_id', 40).notNullable().references('coordinated_prs.id');
    t.string('site_id', 40).notNullable().references('sites.id');
    t.string('host_pr_url', 2000).nullable();
    t.string('host_pr_state', 20).nullable();
    t.text('last_error').nullable();
    t.string('leg_status', 20).notNullable();
    t.string('approval_status', 30).notNullable();
    t.index(['coordinated_pr_id']);
  });
}

export async function down(db: Knex) {
  for (const t of ['coordinated_pr_legs', 'coordinated_prs', 'sites', 'audit_log', 'service_connections']) await db.schema.dropTable(t);
}
