#!/usr/bin/env node
/**
 * The `pactum` command. Each subcommand reads the same environment as the server (DATA_DIR,
 * DATABASE_URL, JWT_SECRET, ...), so what it writes or signs is what a server started with that
 * environment sees and accepts.
 */
import './node-version.js'; // first: an old Node gets one line, not a native crash
import { restoreYoungGenerationGrowth } from './startup-heap.js'; // before any other module loads
import { createLogger } from '../log.js';
import { isUsageError } from './args.js';
import { ConfigError } from '../config.js';

// Each command's module is loaded when it runs: the conformance runner's generators stay out of
// the server's memory, and `pactum token` does not load the server.
const serve = async (a: string[]) => (await import('./serve.js')).serve(a, restoreYoungGenerationGrowth);
// Other commands are short-lived: a small young generation is all they need.
const migrateCommand = async (a: string[]) => (await import('./serve.js')).migrateCommand(a);
const org = async (a: string[]) => (await import('./accounts.js')).org(a);
const user = async (a: string[]) => (await import('./accounts.js')).user(a);
const repo = async (a: string[]) => (await import('./repos.js')).repo(a);
const proposals = async (a: string[]) => (await import('./proposals.js')).proposals(a);
const conformance = async (a: string[]) => (await import('./conformance.js')).conformance(a);
const token = async (a: string[]) => (await import('./token.js')).token(a);
const scan = async (a: string[]) => (await import('./scan.js')).scan(a);

/** Each command, its usage lines (shown by `pactum <command> --help`) and what runs it. */
const commands: Record<string, { usage: string; run: (args: string[]) => Promise<number> }> = {
  serve: { usage: 'pactum serve                     migrate the database, then serve on HOST:PORT', run: serve },
  migrate: { usage: 'pactum migrate                   apply database migrations and exit', run: migrateCommand },
  org: {
    usage: `pactum org create <slug> [--name NAME]
pactum org list`,
    run: org,
  },
  user: {
    usage: `pactum user create <username> --org <slug|id> (--role ROLE | --admin) --password-stdin
pactum user passwd <username> --password-stdin
pactum user token <username> [--name NAME] [--ttl 90d]   a personal token, the Git LFS password
pactum user tokens <username>    its personal tokens: id, name, created, expires, last used, state
pactum user token revoke <username> <name|id>
pactum user list`,
    run: user,
  },
  repo: {
    usage: `pactum repo create <org>/<repo> [--public]
pactum repo grant <org>/<repo> <username> read|write|admin
pactum repo revoke <org>/<repo> <username>
pactum repo delete-object <org>/<repo> <oid> --reason TEXT   take an object down: 410, uploads of it refused
pactum repo restore-object <org>/<repo> <oid> --reason TEXT  lift the takedown (both are written to the audit log)
pactum repo list`,
    run: repo,
  },
  scan: {
    usage: `pactum scan <url> [--server URL] [--token T] [--mode single|site] [--max-pages N] [--standard WCAG2A|WCAG2AA|WCAG2AAA]
           [--format sarif|junit|csv --output FILE] [--fail-on error|warning|notice|none]
                                   scan a site on a running pactum (PACTUM_SERVER, PACTUM_TOKEN), wait, summarise,
                                   write an export; exit 1 when issues at or above --fail-on (default error) remain`,
    run: scan,
  },
  proposals: { usage: 'pactum proposals import <file.json>   regulatory update proposals', run: proposals },
  conformance: {
    usage: `pactum conformance --target URL [--api dashboard|legacy|batch|all] [--token T] [--basic user:pass]
                   [--repo org/repo] [--seed N] [--max-examples N] [--junit out.xml] [--read-only]
                   [--phases examples,generated,negative,mcp,flow]
                                 check any server against the specs`,
    run: conformance,
  },
  token: {
    usage: `pactum token --user <username> [--ttl 1h] [--audience URL]
pactum token --sub <id> --org <slug|id> [--perm P1,P2] [--role ROLE] [--ttl 1h] [--audience URL]
    The audience is the server's URL: --audience, else PUBLIC_URL, else the URL of the server
    that last started on this database (DATA_DIR or DATABASE_URL), else HOST and PORT.`,
    run: token,
  },
};

const indent = (text: string) => text.replace(/^/gm, '  ');

const USAGE = `pactum — the dashboard MCP endpoint and the Git LFS object APIs

Usage:
${Object.values(commands).map((c) => indent(c.usage)).join('\n')}
  pactum <command> --help          that command's usage

Roles: system_admin, org_admin, member, viewer, service.
Settings come from the environment; see the README.`;

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
  // Before anything runs: `pactum serve --help` must not start a server.
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(`Usage:\n${indent(command.usage)}`);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (isUsageError(err)) {
      // One line: the message names the setting or the argument to fix.
      console.error(`pactum ${name}: ${(err as Error).message.replace(/\n\s*/g, ' ')}`);
      if (!(err instanceof ConfigError) && !/usage:/.test((err as Error).message)) console.error(`usage:\n${indent(command.usage)}`);
      return 2;
    }
    createLogger('error').error({ err }, `pactum ${name} failed`);
    return 1;
  }
}

void run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
