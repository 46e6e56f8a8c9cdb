#!/usr/bin/env node
/**
 * The `pactum` command. Each subcommand reads the same environment as the server (DATA_DIR,
 * DATABASE_URL, JWT_SECRET, ...), so what it writes or signs is what a server started with that
 * environment sees and accepts.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { startServer } from '../server.js';
import { migrate, openDb } from '../db/knex.js';
import { createTokenService, parseTtl } from '../auth/jwt.js';
import { isPermission, isRole, type Permission } from '../auth/permissions.js';
import { createLogger } from '../log.js';

const USAGE = `pactum — the dashboard MCP endpoint and the Git LFS object APIs

Usage:
  pactum serve                      migrate the database, then serve on HOST:PORT
  pactum migrate                    apply database migrations and exit
  pactum token --sub ID --org ORG [--perm P1,P2] [--role ROLE] [--ttl 1h]
                                    print a bearer JWT the server accepts

Settings come from the environment; see the README.`;

export class UsageError extends Error {}

type Command = (args: string[]) => Promise<number>;

const commands: Record<string, Command> = {
  async serve() {
    const running = await startServer();
    const log = running.services.log;
    log.info({ url: running.url, dataDir: running.services.config.dataDir }, 'pactum is serving');
    const stop = (signal: string) => {
      log.info({ signal }, 'shutting down');
      running.close().then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
    await new Promise(() => {}); // serve until a signal
    return 0;
  },

  async migrate() {
    const config = loadConfig();
    const db = openDb(config);
    try {
      const applied = await migrate(db);
      console.log(applied.length ? `applied ${applied.join(', ')}` : 'the database is up to date');
    } finally {
      await db.destroy();
    }
    return 0;
  },

  async token(args) {
    const { values } = parseArgs({
      args,
      options: {
        sub: { type: 'string' },
        org: { type: 'string' },
        perm: { type: 'string' },
        role: { type: 'string' },
        ttl: { type: 'string', default: '1h' },
      },
    });
    if (!values.sub || !values.org) throw new UsageError('token needs --sub <userId> and --org <orgId>');
    const scopes = (values.perm ?? '').split(',').map((p) => p.trim()).filter(Boolean);
    const unknown = scopes.filter((p) => !isPermission(p));
    if (unknown.length) throw new UsageError(`unknown permission ${unknown.join(', ')}`);
    if (values.role && !isRole(values.role)) throw new UsageError(`unknown role ${values.role}`);
    if (!scopes.length && !values.role) throw new UsageError('token needs --perm or --role: a token without permissions can call nothing');
    const tokens = createTokenService(loadConfig());
    const jwt = await tokens.sign(
      { sub: values.sub, orgId: values.org, role: values.role as never, scopes: scopes as Permission[] },
      parseTtl(values.ttl!),
    );
    console.log(jwt);
    return 0;
  },
};

export async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    console.error(`pactum: unknown command ${name}\n\n${USAGE}`);
    return 2;
  }
  try {
    return await command(rest);
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`pactum ${name}: ${(err as Error).message}`);
      return 2;
    }
    createLogger('error').error({ err }, `pactum ${name} failed`);
    return 1;
  }
}

run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
