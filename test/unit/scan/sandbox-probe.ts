/**
 * Run by chromium-sandbox.test.ts as its own process (as another user): checks one page with the
 * Chromium engine as that process would in production, and prints what the test judges as JSON:
 * the uid, whether the engine ran Chromium sandboxed, the page's issues, the seccomp mode of each
 * renderer (2: filtered, as the sandbox leaves it; 0: none) and the warnings logged.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createChromiumEngine } from '../../../src/domain/scan/chromium/engine.js';

/** The process and every process below it, by parent pid. */
function descendants(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, ppid] of parents) if (ppid === out[i]) out.push(pid);
  return out.slice(1);
}

const read = (path: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};

const warnings: string[] = [];
const engine = createChromiumEngine({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  pageTimeoutMs: 60_000,
  maxPages: 1,
  log: { warn: (_obj, msg) => void warnings.push(msg) },
});
const session = engine.openSession({ allowPrivateNetworks: false }, { owner: 'probe' });
try {
  const page = await session.check({
    url: 'https://sandbox-probe.invalid/',
    html: '<!doctype html><html lang="en"><head><title>Probe</title></head><body><main><h1>Probe</h1><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></main></body></html>',
    standard: 'WCAG2AA',
  });
  const renderers = descendants((await engine.browserPid())!)
    .filter((pid) => /(^|[\s\0])--type=renderer([\s\0]|$)/.test(read(`/proc/${pid}/cmdline`))) // Chromium rewrites its command line as one string
    .map((pid) => Number(/Seccomp:\s+(\d+)/.exec(read(`/proc/${pid}/status`))?.[1] ?? -1));
  console.log(JSON.stringify({ uid: process.getuid?.(), sandboxed: engine.stats().sandboxed, issues: page.issues.map((i) => i.code), renderers, warnings }));
} finally {
  await session.close();
  await engine.close();
}
