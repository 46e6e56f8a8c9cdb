import type { Knex } from 'knex';

/**
 * Monitoring: schedules (a site of an org scanned on a cron expression), their runs, webhooks and
 * their deliveries.
 *
 * - `monitor_runs` has one row per (schedule, tick): the unique key is what lets exactly one
 *   instance start a run when several find the schedule due at once (the others' inserts fail).
 *   A run's counts are those of the comparison with the schedule's previous completed run.
 * - `webhooks.secret_sealed` is the signing secret sealed with the secrets key (it is needed to
 *   sign, so it cannot be hashed); it is shown once at creation and never returned.
 * - `webhook_deliveries` are claimed for an attempt (`claimed_until`) by one instance at a time;
 *   `webhook_attempts` logs each attempt (never the secret or the body's signature).
 */
export async function up(db: Knex) {
  await db.schema.createTable('monitor_schedules', (t) => {
    t.string('id', 40).primary();
    t.string('org_id', 40).notNullable().references('id').inTable('orgs').onDelete('CASCADE');
    t.string('site_url', 2000).notNullable();
    t.string('cron', 200).notNullable();
    t.string('standard', 20).notNullable();
    t.string('scan_mode', 10).notNullable();
    t.integer('max_pages').notNullable();
    t.integer('concurrency').notNullable();
    t.boolean('enabled').notNullable();
    t.string('next_run_at', 32).nullable();
    t.string('created_by', 255).notNullable();
    t.string('created_at', 32).notNullable();
    t.string('updated_at', 32).notNullable();
    t.unique(['org_id', 'site_url']);
    t.index(['enabled', 'next_run_at']);
  });
  await db.schema.createTable('monitor_runs', (t) => {
    t.string('id', 40).primary();
    t.string('schedule_id', 40).notNullable().references('id').inTable('monitor_schedules').onDelete('CASCADE');
    t.string('org_id', 40).notNullable();
    t.string('tick_at', 32).notNullable();
    t.string('scan_id', 40).nullable();
    t.string('previous_scan_id', 40).nullable();
    /** scanning | compared | first | failed | refused */
    t.string('status', 16).notNullable();
    t.string('error', 2000).nullable();
    t.integer('new_count').nullable();
    t.integer('fixed_count').nullable();
    t.integer('still_present_count').nullable();
    t.string('claimed_until', 32).nullable();
    t.string('created_at', 32).notNullable();
    t.string('finished_at', 32).nullable();
    t.unique(['schedule_id', 'tick_at']);
    t.index(['status']);
    t.index(['scan_id']);
  });
  await db.schema.createTable('webhooks', (t) => {
    t.string('id', 40).primary();
    t.string('org_id', 40).notNullable().references('id').inTable('orgs').onDelete('CASCADE');
    t.string('url', 2000).notNullable();
    t.text('secret_sealed').notNullable();
    t.string('events', 500).notNullable();
    t.boolean('enabled').notNullable();
    t.string('disabled_reason', 2000).nullable();
    t.string('disabled_at', 32).nullable();
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    t.string('created_by', 255).notNullable();
    t.string('created_at', 32).notNullable();
    t.index(['org_id']);
  });
  await db.schema.createTable('webhook_deliveries', (t) => {
    t.string('id', 40).primary();
    t.string('webhook_id', 40).notNullable().references('id').inTable('webhooks').onDelete('CASCADE');
    t.string('org_id', 40).notNullable();
    t.string('event', 40).notNullable();
    t.string('schedule_id', 40).nullable();
    t.string('scan_id', 40).nullable();
    t.text('payload').notNullable();
    /** pending | delivered | failed */
    t.string('status', 16).notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.string('next_attempt_at', 32).nullable();
    t.string('claimed_until', 32).nullable();
    t.string('created_at', 32).notNullable();
    t.string('finished_at', 32).nullable();
    t.index(['status', 'next_attempt_at']);
    t.index(['webhook_id', 'created_at']);
  });
  await db.schema.createTable('webhook_attempts', (t) => {
    t.string('id', 40).primary();
    t.string('delivery_id', 40).notNullable().references('id').inTable('webhook_deliveries').onDelete('CASCADE');
    t.integer('attempt').notNullable();
    t.string('at', 32).notNullable();
    t.string('outcome', 16).notNullable();
    t.integer('http_status').nullable();
    t.integer('duration_ms').notNullable();
    t.string('error_class', 32).nullable();
    t.unique(['delivery_id', 'attempt']);
  });
}

export async function down(db: Knex) {
  await db.schema.dropTable('webhook_attempts');
  await db.schema.dropTable('webhook_deliveries');
  await db.schema.dropTable('webhooks');
  await db.schema.dropTable('monitor_runs');
  await db.schema.dropTable('monitor_schedules');
}
