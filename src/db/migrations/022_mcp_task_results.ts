import type { Knex } from 'knex';

/**
 * A task of MCP 2025-11-25 whose tool refused the call at once (a bad URL, the org's queue full):
 * that revision answers a task-augmented call with a task in any case, and the task then fails
 * with the tool's error result, which `tasks/result` returns. A task that follows a scan keeps
 * no result here: it reads it from the scan.
 */
export async function up(db: Knex) {
  await db.schema.alterTable('mcp_tasks', (t) => {
    t.text('result').nullable();
  });
}

export async function down(db: Knex) {
  await db.schema.alterTable('mcp_tasks', (t) => {
    t.dropColumn('result');
  });
}
