/**
 * Chromium keeps the last of a repeated switch, and Playwright passes its own --enable-features
 * before the engine's flags: the engine's list must carry Playwright's features too, or they are
 * switched off. A stand-in browser that records its command line shows what Playwright passes.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { CHROMIUM_FLAGS } from '../../../src/domain/scan/chromium/engine.js';

const dir = mkdtempSync(join(tmpdir(), 'pactum-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function commandLine(args: readonly string[]): Promise<string[]> {
  const out = join(dir, 'argv');
  const browser = join(dir, 'browser.sh');
  writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$@" > '${out}'\nexit 1\n`);
  chmodSync(browser, 0o755);
  await chromium.launch({ executablePath: browser, args: [...args], timeout: 10_000 }).then((b) => b.close(), () => undefined);
  return readFileSync(out, 'utf8').trim().split('\n');
}

const features = (argv: string[]) => argv.filter((a) => a.startsWith('--enable-features=')).map((a) => a.slice('--enable-features='.length).split(','));

describe("the engine's Chromium flags", () => {
  it("come last, and their --enable-features keeps every feature Playwright enables", async () => {
    const argv = await commandLine(CHROMIUM_FLAGS);
    const lists = features(argv);
    expect(lists.length).toBeGreaterThanOrEqual(2);
    const ours = lists.at(-1)!;
    expect(ours).toContain('NetworkServiceInProcess2');
    for (const feature of lists.slice(0, -1).flat()) expect(ours, `Playwright's ${feature}`).toContain(feature);
    expect(argv.indexOf('--js-flags=--max-semi-space-size=1')).toBeGreaterThan(argv.findIndex((a) => a.startsWith('--enable-features=')));
  });

  it('(control) the stand-in shows Playwright enabling features of its own', async () => {
    const lists = features(await commandLine([]));
    expect(lists).toHaveLength(1);
    expect(lists[0]!.filter(Boolean).length).toBeGreaterThan(0);
  });
});
