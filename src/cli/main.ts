#!/usr/bin/env node
/**
 * The `pactum` command. Each subcommand reads the same environment as the server (DATA_DIR,
 * DATABASE_URL, JWT_SECRET, ...), so what it writes or signs is what a server started with that
 * environment sees and accepts.
 */
import './node-version.js'; // first: an old Node gets one line, not a native crash
import './serving-process.js'; // `serve` restarts itself with its V8 and malloc settings, before the server loads
import { governYoungGeneration } from './startup-heap.js'; // before any other module loads
import { createLogger } from '../telemetry/log.js';
import { isUsageError, useConfigFile } from './args.js';
import { ConfigError, nearest } from '../ground/config.js';

// Each command's module is loaded when it runs: the conformance runner's generators stay out of
// the server's memory, and `pactum token` does not load the server.
const serve = async (a: string[]) => (await import('./serve.js')).serve(a, governYoungGeneration);
// Other commands are short-lived: a small young generation is all they need.
const migrateCommand = async (a: string[]) => (await import('./serve.js')).migrateCommand(a);
const org = async (a: string[]) => (await import('./accounts.js')).org(a);
const user = async (a: string[]) => (await import('./accounts.js')).user(a);
const repo = async (a: string[]) => (await import('./repos.js')).repo(a);
const proposals = async (a: string[]) => (await import('./proposals.js')).proposals(a);
const conformance = async (a: string[]) => (await import('./conformance.js')).conformance(a);
const token = async (a: string[]) => (await import('./token.js')).token(a);
const scan = async (a: string[]) => (await import('./scan.js')).scan(a);
const mock = async (a: string[]) => (await import('./mock.js')).mock(a);
const oauth = async (a: string[]) => (await import('./oauth.js')).oauth(a);

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
pactum user token <username> [--name NAME] [--ttl 90d]   a personal token, the Git LFS password; without --ttl it
                                 never expires (until revoked); names are unique per user
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
           [--format sarif|junit|csv|pa11y --output FILE] [--source-map URL-PREFIX=DIR]... [--fail-on error|warning|notice|none]
           [--baseline SCAN-ID]
                                   scan a site on a running pactum (PACTUM_SERVER, PACTUM_TOKEN), wait, summarise,
                                   write an export (pa11y: GitLab's accessibility report; SARIF: for GitHub code
                                   scanning, pages at host/path, or at DIR for pages under URL-PREFIX);
                                   exit 1 when issues at or above --fail-on (default error) remain; with
                                   --baseline, compare with that earlier scan and count only new findings`,
    run: scan,
  },
  mock: {
    usage: `pactum mock [--port-base N] [--host H]
                                 Prism mock servers of the three specs, one API per port: dashboard N (4010),
                                 legacy N+1, batch N+2 (MOCK_PORT_BASE=N too); Ctrl-C stops them`,
    run: mock,
  },
  proposals: { usage: 'pactum proposals import <file.json>   regulatory update proposals', run: proposals },
  conformance: {
    usage: `pactum conformance --target URL [--api dashboard|legacy|batch|all] [--token T] [--basic user:pass]
                   [--repo org/repo] [--allow-writes org/repo] [--seed N] [--max-examples N] [--junit out.xml] [--read-only]
                   [--phases examples,generated,negative,mcp,flow]
                                 check any server against the specs; exit 2 when the target is down or
                                 refuses the credentials. Writes (uploads, locks) only to --allow-writes;
                                 removes the locks and sessions it made, even when it fails`,
    run: conformance,
  },
  token: {
    usage: `pactum token --user <username> [--ttl 1h] [--audience URL]
pactum token --sub <id> --org <slug|id> [--perm P1,P2] [--role ROLE] [--ttl 1h] [--audience URL]
    The audience is the server's URL: --audience, else PUBLIC_URL, else the URL of the server
    that last started on this database (DATA_DIR or DATABASE_URL), else HOST and PORT.`,
    run: token,
  },
  oauth: {
    usage: `pactum oauth grants (--user <username> | --org <slug|id>)   what users allowed MCP clients: grant id, user, client, scopes, since, until
pactum oauth revoke <grant id>   ends the grant and its tokens at their next request`,
    run: oauth,
  },
};

const indent = (text: string) => text.replace(/^/gm, '  ');

/** For an unknown option: the option of the command's usage it is closest to, if one is close. */
function didYouMean(err: unknown, usage: string): string {
  if ((err as { code?: string }).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return '';
  const given = /Unknown option '(-{1,2}[^']+)'/.exec((err as Error).message)?.[1];
  if (!given) return '';
  const near = nearest(given.replace(/=.*$/, ''), [...new Set(usage.match(/--[a-z][a-z-]*/g) ?? [])]);
  return near ? ` (did you mean ${near}?)` : '';
}

const USAGE = `pactum — the dashboard MCP endpoint and the Git LFS object APIs

Usage:
${Object.values(commands).map((c) => indent(c.usage)).join('\n')}
  pactum <command> --help          that command's usage
  pactum --config FILE <command>   read the settings from FILE instead of pactum.env

Roles: system_admin, org_admin, member, viewer, service.
Settings (DATA_DIR, DATABASE_URL, JWT_SECRET, …) come from the environment, over the settings
file pactum.env in the working directory or the nearest parent (or --config FILE), the same way
for the server and for every command: docs/configuration.md.`;

/** `--config FILE` (or --config=FILE), anywhere on the line: the settings file of every command. */
function takeConfig(argv: string[]): { argv: string[]; file?: string } {
  const i = argv.findIndex((a) => a === '--config' || a.startsWith('--config='));
  if (i < 0) return { argv };
  const file = argv[i]!.startsWith('--config=') ? argv[i]!.slice('--config='.length) : argv[i + 1];
  if (!file || file.startsWith('-')) throw new Error('--config takes a file: pactum --config FILE <command>');
  return { argv: [...argv.slice(0, i), ...argv.slice(i + (argv[i] === '--config' ? 2 : 1))], file };
}

export async function run(argvWithConfig: string[]): Promise<number> {
  let argv: string[];
  try {
    const taken = takeConfig(argvWithConfig);
    argv = taken.argv;
    useConfigFile(taken.file);
  } catch (err) {
    console.error(`pactum: ${(err as Error).message}`);
    return 2;
  }
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    return name ? 0 : 2;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) {
    const near = nearest(name, Object.keys(commands));
    console.error(`pactum: unknown command ${name}${near ? ` (did you mean ${near}?)` : ''}\n\n${USAGE}`);
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
      // One line: the message names the setting or the argument to fix, and the likely one meant.
      console.error(`pactum ${name}: ${(err as Error).message.replace(/\n\s*/g, ' ')}${didYouMean(err, command.usage)}`);
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
