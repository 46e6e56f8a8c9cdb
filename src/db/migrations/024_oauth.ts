import type { Knex } from 'knex';

/**
 * The authorization server's state (oidc-provider's models: grants, authorization codes, access
 * and refresh tokens, interactions, sessions, registered clients), one row per model instance, so
 * that every instance sharing the database redeems what another minted. `payload` is the model's
 * JSON; `grant_id` lets a grant's revocation end all its tokens at once; `consumed_at` marks a
 * spent code or refresh token (a second use is refused and ends the grant).
 * `oauth_keys` holds the signing key every instance signs ID tokens with (sealed with the secrets key).
 */
export async function up(db: Knex) {
  await db.schema.createTable('oauth_models', (t) => {
    t.string('model', 40).notNullable();
    t.string('id', 255).notNullable();
    t.text('payload').notNullable();
    t.string('grant_id', 255).nullable();
    t.string('uid', 255).nullable();
    t.string('user_code', 255).nullable();
    t.string('account_id', 255).nullable();
    t.string('consumed_at', 32).nullable();
    t.string('expires_at', 32).nullable();
    t.primary(['model', 'id']);
    t.index(['grant_id']);
    t.index(['uid']);
    t.index(['account_id']);
    t.index(['expires_at']);
  });
  await db.schema.createTable('oauth_keys', (t) => {
    t.string('id', 40).primary();
    t.text('sealed').notNullable();
    t.string('created_at', 32).notNullable();
  });
}

export async function down(db: Knex) {
  await db.schema.dropTable('oauth_keys');
  await db.schema.dropTable('oauth_models');
}
