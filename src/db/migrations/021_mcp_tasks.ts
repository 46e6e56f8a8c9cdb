import type { Knex } from 'knex';

/**
 * Tasks of the MCP Tasks extension (`io.modelcontextprotocol/tasks`): a tool call answered with a
 * task handle, polled and cancelled by its id through any instance. The id is the bearer of the
 * task (unguessable); the org scopes it. A task that follows a scan reads its progress and result
 * from the scan's row; the row here keeps what the scan does not: who owns the task, until when,
 * and whether it was cancelled.
 */
export async function up(db: Knex) {
  await db.schema.createTable('mcp_tasks', (t) => {
    t.string('id', 64).primary();
    t.string('org_id', 40).notNullable();
    t.string('subject', 100).notNullable();
    t.string('tool', 100).notNullable();
    t.string('scan_id', 40).nullable();
    /** null while the work decides (working); 'cancelled' once tasks/cancel stopped it. */
    t.string('status', 20).nullable();
    t.string('created_at', 32).notNullable();
    t.string('last_updated_at', 32).notNullable();
    t.string('expires_at', 32).notNullable();
    t.index(['expires_at']);
  });
}

export async function down(db: Knex) {
  await db.schema.dropTable('mcp_tasks');
}
