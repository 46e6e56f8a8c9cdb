/**
 * Chromium's sandbox, for real: the engine run by a user other than root (here: nobody, through
 * setpriv when the tests run as root) starts Chromium sandboxed, and its renderers (where a
 * scanned page runs) are under seccomp-bpf; run as root it cannot be, and the renderers show no
 * filter (the control that shows the probe tells the two apart). Where the sandbox cannot start
 * (here: Chromium told not to use user namespaces, and Debian's chromium has no setuid helper),
 * the engine starts Chromium again without it, warns once, and the page is still checked.
 */
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { UNAVAILABLE_WARNING } from '../../../src/domain/scan/chromium/sandbox.js';
import { requireChromium } from '../../helpers/chromium.js';

const run = promisify(execFile);
const probe = new URL('./sandbox-probe.ts', import.meta.url).pathname;
const NOBODY = 65534;
const root = process.getuid?.() === 0;
const home = mkdtempSync(join(tmpdir(), 'pactum-sandbox-'));
chmodSync(home, 0o755);
if (root) chownSync(home, NOBODY, NOBODY);
afterAll(() => rmSync(home, { recursive: true, force: true }));

// nobody must reach the checkout to run the probe. A checkout inside a private directory (mktemp -d
// makes it 0700, as CI's fresh clone is) gets others' search permission (x, not read) on each such
// directory for this file's duration, and its mode back after.
if (root) {
  const opened: [string, number][] = [];
  for (let dir = resolve(fileURLToPath(new URL('../../..', import.meta.url))); ; dir = dirname(dir)) {
    const { mode } = statSync(dir);
    if (!(mode & 0o001)) {
      opened.push([dir, mode & 0o7777]);
      chmodSync(dir, (mode & 0o7777) | 0o001);
    }
    if (dirname(dir) === dir) break;
  }
  afterAll(() => {
    for (const [dir, mode] of opened) chmodSync(dir, mode);
  });
}

interface Probed { uid: number; sandboxed: boolean; issues: string[]; renderers: number[]; warnings: string[] }

/** The probe's answer, run as a user other than root (nobody, when the tests run as root) or as this process's user. */
async function probeAs(who: 'non-root' | 'self', chromium = requireChromium()): Promise<Probed> {
  const node = [process.execPath, '--import', 'tsx', probe];
  const command = who === 'non-root' && root ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...node] : node;
  const { stdout } = await run(command[0]!, command.slice(1), { env: { ...process.env, HOME: home, CHROMIUM_PATH: chromium }, timeout: 120_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Probed;
}

describe("Chromium's sandbox", () => {
  it('holds the renderers when pactum runs as a user other than root', { timeout: 150_000 }, async () => {
    const probed = await probeAs('non-root');
    expect(probed.uid).not.toBe(0);
    expect(probed).toMatchObject({ sandboxed: true, issues: ['image-alt'], warnings: [] });
    expect(probed.renderers.length).toBeGreaterThan(0);
    for (const mode of probed.renderers) expect(mode, 'seccomp mode of a renderer (2: filtered)').toBe(2);
  });

  // The control: the probe sees the difference. Only meaningful where the tests run as root.
  if (root) it('is off as root (Chromium will not start sandboxed there), and the probe sees it', { timeout: 150_000 }, async () => {
    const probed = await probeAs('self');
    expect(probed).toMatchObject({ uid: 0, sandboxed: false, issues: ['image-alt'] });
    expect(probed.renderers.length).toBeGreaterThan(0);
    for (const mode of probed.renderers) expect(mode).toBe(0);
  });

  it('that cannot start is given up, with one warning, and the page is still checked', { timeout: 150_000 }, async () => {
    // Debian's chromium without user namespaces: it needs the setuid helper it does not have.
    const chromium = join(home, 'chromium-without-userns.sh');
    writeFileSync(chromium, `#!/bin/sh\ncase " $* " in *" --no-sandbox "*) exec '${requireChromium()}' "$@";; *) exec '${requireChromium()}' --disable-namespace-sandbox "$@";; esac\n`);
    chmodSync(chromium, 0o755);
    const probed = await probeAs('non-root', chromium);
    expect(probed).toMatchObject({ sandboxed: false, issues: ['image-alt'], warnings: [UNAVAILABLE_WARNING] });
  });
});
