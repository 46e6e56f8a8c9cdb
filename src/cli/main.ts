#!/usr/bin/env node
/**
 * The `pactum` command. Each subcommand reads the same environment as the server (DATA_DIR,
 * DATABASE_URL, JWT_SECRET, ...), so what it writes or signs is what a server started with that
 * environment sees and accepts.
 */
import { createLogger } from '../log.js';
import { isUsageError } from './args.js';
import { org, user } from './accounts.js';
import { migrateCommand, serve } from './serve.js';
import { token } from './token.js';
import { repo } from './repos.js';
import { proposals } from './proposals.js';
import { conformance } from './conformance.js';

const USAGE = `pactum — the dashboard MCP endpoint and the Git LFS object APIs

Usage:
  pactum serve                     migrate the database, then serve on HOST:PORT
  pactum migrate                   apply database migrations and exit
  pactum org create <slug> [--name NAME]
  pactum org list
  pactum user create <username> --org <slug> (--role ROLE | --admin) --password-stdin
  pactum user passwd <username> --password-stdin
  pactum user token <username> [--name NAME] [--ttl 90d]   a personal token, the Git LFS password
  pactum user tokens <username>    its personal tokens: id, name, created, expires, last used, state
  pactum user token revoke <username> <name|id>
  pactum user list
  pactum repo create <org>/<repo> [--public]
  pactum repo grant <org>/<repo> <username> read|write|admin
  pactum repo revoke <org>/<repo> <username>
  pactum repo delete-object <org>/<repo> <oid> --reason TEXT
  pactum repo list
  pactum proposals import <file.json>   regulatory update proposals
  pactum conformance --target URL [--api dashboard|legacy|batch|all] [--token T] [--basic user:pass]
                     [--repo org/repo] [--seed N] [--max-examples N] [--junit out.xml] [--read-only]
                     [--phases examples,generated,negative,mcp,flow]
                                   check any server against the specs
  pactum token --user <username> [--ttl 1h]
  pactum token --sub <id> --org <orgId> [--perm P1,P2] [--role ROLE] [--ttl 1h]

Roles: system_admin, org_admin, member, viewer, service.
Settings come from the environment; see the README.`;

const commands: Record<string, (args: string[]) => Promise<number>> = {
  serve,
  migrate: migrateCommand,
  token,
  org,
  user,
  repo,
  proposals,
  conformance,
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
    if (isUsageError(err)) {
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
