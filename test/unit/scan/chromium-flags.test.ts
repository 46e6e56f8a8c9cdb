/**
 * How the engine starts Chromium, seen through stand-in browsers (shell scripts) that record their
 * command line, fail to start, or never answer: the flags the issue asks for reach the browser, each
 * launch gets a fresh profile that is removed afterwards, and a browser that cannot start is
 * reported with its own last words instead of being waited for. Chromium's sandbox is on unless
 * the server runs as root (then --no-sandbox, and one warning at start-up); where the sandbox
 * cannot start, the engine starts Chromium again without it and says so once. (That the sandbox
 * really holds the renderers when pactum is not root: chromium-sandbox.test.ts, with Chromium.)
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../../src/domain/scan/chromium/browser.js';
import { CHROMIUM_FLAGS, createChromiumEngine } from '../../../src/domain/scan/chromium/engine.js';
import { ROOT_WARNING, sandboxFor, UNAVAILABLE_WARNING, type SandboxChoice } from '../../../src/domain/scan/chromium/sandbox.js';
import { CheckError } from '../../../src/domain/scan/engine.js';
import { warnUnsandboxed } from '../../../src/scans/engine-choice.js';
import type { Logger } from '../../../src/telemetry/log.js';

const dir = mkdtempSync(join(tmpdir(), 'pactum-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function standIn(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

async function launchFailure(executablePath: string, timeoutMs = 10_000): Promise<Error> {
  return launchBrowser({ executablePath, args: CHROMIUM_FLAGS, timeoutMs }).then(
    async (b) => {
      await b.close();
      throw new Error('the stand-in started');
    },
    (err: unknown) => err as Error,
  );
}

describe("the engine's Chromium", () => {
  it('gets the flags the issue asks for, a fresh profile of its own, and the DevTools pipe', async () => {
    const out = join(dir, 'argv');
    await launchFailure(standIn('record.sh', `printf '%s\\n' "$@" > '${out}'\nexit 1`));
    const argv = readFileSync(out, 'utf8').trim().split('\n');
    for (const flag of ['--headless', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']) {
      expect(argv).toContain(flag);
    }
    expect(argv).toContain('--remote-debugging-pipe');
    const profile = argv.find((a) => a.startsWith('--user-data-dir='))!.slice('--user-data-dir='.length);
    expect(profile.startsWith(tmpdir())).toBe(true);
    expect(existsSync(profile), 'the profile is removed once the browser has gone').toBe(false);
    // One list each: Chromium keeps only the last of a repeated --enable-features or --disable-features.
    expect(argv.filter((a) => a.startsWith('--enable-features='))).toEqual(['--enable-features=NetworkServiceInProcess2,SkipListAccountsWithoutGaiaCookies']);
    expect(argv.filter((a) => a.startsWith('--disable-features='))).toHaveLength(1);
  });

  it('that cannot start is reported with the last line it printed', async () => {
    const err = await launchFailure(standIn('broken.sh', `echo 'starting' >&2\necho 'Missing X server or $DISPLAY' >&2\nexit 1`));
    expect(err.message).toContain('Missing X server or $DISPLAY');
  });

  it('that is not there is reported as such, not waited for', async () => {
    const err = await launchFailure(join(dir, 'no-such-browser'));
    expect(err.message).toMatch(/could not be started: .*ENOENT/);
  });

  it('that never answers is given up on after the launch timeout, and stopped', async () => {
    const pidFile = join(dir, 'pid');
    const err = await launchFailure(standIn('silent.sh', `echo $$ > '${pidFile}'\nexec sleep 60`), 1000);
    expect(err.message).toMatch(/did not answer within 1 s/);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(() => process.kill(pid, 0), 'the stand-in was killed').toThrow();
  });
});

/** Runs one check through the engine with `executablePath` (a stand-in that never starts): the error, and the warnings logged. */
async function engineLaunch(executablePath: string, sandbox?: SandboxChoice) {
  const warnings: string[] = [];
  const engine = createChromiumEngine({ executablePath, pageTimeoutMs: 5_000, sandbox, log: { warn: (_obj, msg) => void warnings.push(msg) } });
  const session = engine.openSession({ allowPrivateNetworks: false });
  const tries = [];
  for (let i = 0; i < 2; i++) tries.push(await session.check({ url: 'https://example.test/', html: '<p>x</p>', standard: 'WCAG2AA' }).then(() => null, (err: unknown) => err));
  await session.close();
  await engine.close();
  return { errors: tries, warnings, sandboxed: engine.stats().sandboxed };
}

describe("Chromium's sandbox", () => {
  it('is on unless the process runs as root, where Chromium only starts with --no-sandbox', () => {
    expect(sandboxFor(0)).toEqual({ sandboxed: false, flags: ['--no-sandbox'] });
    for (const uid of [1, 1000, 65534]) expect(sandboxFor(uid)).toEqual({ sandboxed: true, flags: [] });
    expect(sandboxFor(undefined).sandboxed).toBe(true); // no uids (not POSIX): nothing to refuse
    expect(CHROMIUM_FLAGS).not.toContain('--no-sandbox');
  });

  it('reaches the browser as chosen: --no-sandbox for root, nothing for another user', async () => {
    for (const [uid, expected] of [[0, true], [1000, false]] as const) {
      const out = join(dir, `argv-${uid}`);
      const { errors } = await engineLaunch(standIn(`record-${uid}.sh`, `printf '%s\\n' "$@" > '${out}'\nexit 1`), sandboxFor(uid));
      expect(errors[0]).toBeInstanceOf(CheckError);
      expect(readFileSync(out, 'utf8').trim().split('\n').includes('--no-sandbox'), `uid ${uid}`).toBe(expected);
    }
  });

  it('is said once at start-up, naming the risk, when the server runs as root; not at all otherwise', () => {
    const lines: string[] = [];
    const log = { warn: (_obj: object, msg: string) => void lines.push(msg) } as unknown as Logger;
    warnUnsandboxed(log, 1000);
    expect(lines).toEqual([]);
    warnUnsandboxed(log, 0);
    expect(lines).toEqual([ROOT_WARNING]);
    expect(ROOT_WARNING).toMatch(/runs as root.*without its sandbox.*exploits a browser bug.*non-root user/);
  });

  it('that cannot start (no user namespaces, no setuid helper) is given up for --no-sandbox, said once, and the scan goes on', async () => {
    const out = join(dir, 'argv-fallback');
    // What Debian's Chromium prints and does when neither kind of sandbox is available.
    const browser = standIn('no-sandbox-available.sh', `case " $* " in
  *" --no-sandbox "*) printf '%s\\n' "$@" >> '${out}'; exit 1;;
  *) echo '[1:1:ERROR:content/browser/zygote_host/zygote_host_impl_linux.cc:130] No usable sandbox! If this is a Debian system, please install the chromium-sandbox package to solve this problem.' >&2; exit 1;;
esac`);
    const { errors, warnings, sandboxed } = await engineLaunch(browser, sandboxFor(1000));
    expect(warnings).toEqual([UNAVAILABLE_WARNING]); // once, for both checks
    expect(sandboxed).toBe(false);
    // Both checks started Chromium without the sandbox (this stand-in then fails for another reason).
    expect(readFileSync(out, 'utf8').split('\n').filter((a) => a === '--no-sandbox')).toHaveLength(2);
    for (const err of errors) expect((err as Error).message).not.toMatch(/No usable sandbox/);
  });

  it('is not given up for any other launch failure', async () => {
    const { errors, warnings, sandboxed } = await engineLaunch(standIn('other-failure.sh', `echo 'Missing X server or $DISPLAY' >&2\nexit 1`), sandboxFor(1000));
    expect(warnings).toEqual([]);
    expect(sandboxed).toBe(true);
    expect((errors[0] as Error).message).toContain('Missing X server');
  });
});
