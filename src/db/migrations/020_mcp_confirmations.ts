import type { Knex } from 'knex';

/**
 * The confirmations an MCP call was run on (confirmation.ts): each confirmed request state is
 * used once, on whichever instance its retry reaches. A row outlives its state's expiry by
 * nothing; expired rows are deleted as new ones come.
 */
export async function up(db: Knex) {
  await db.schema.createTable('mcp_confirmations', (t) => {
    t.string('id', 40).primary();
    t.string('expires_at', 32).notNullable();
    t.index(['expires_at']);
  });
}

export async function down(db: Knex) {
  await db.schema.dropTable('mcp_confirmations');
}
