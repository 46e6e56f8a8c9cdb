/**
 * How the engine starts Chromium, seen through stand-in browsers (shell scripts) that record their
 * command line, fail to start, or never answer: the flags the issue asks for reach the browser, each
 * launch gets a fresh profile that is removed afterwards, and a browser that cannot start is
 * reported with its own last words instead of being waited for.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../../src/domain/scan/chromium/browser.js';
import { CHROMIUM_FLAGS } from '../../../src/domain/scan/chromium/engine.js';

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
    for (const flag of ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']) {
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
