/**
 * What reaches the server before anyone is known: password guesses sent at once, anonymous deep
 * JSON, a cross-site form post with cached Basic credentials, and a password sprayer behind a
 * reverse proxy.
 */
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { LFS_JSON, PROBE, basic, batch, report, withPactum } from './harness.js';

const tally = (statuses: number[]) =>
  Object.entries(statuses.reduce<Record<string, number>>((t, s) => ({ ...t, [s || 'cut']: (t[s || 'cut'] ?? 0) + 1 }), {}))
    .map(([s, n]) => `${n}×${s}`)
    .join(', ');

const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** POSTs `bytes` of `[` without credentials; the status, or 0 when the connection was cut. */
function deepPost(url: string, path: string, bytes: number): Promise<number> {
  const body = Buffer.alloc(bytes, '[');
  return new Promise((resolve) => {
    const u = new URL(url);
    const req = request({ host: u.hostname, port: u.port, path, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': body.length } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', () => resolve(0));
    req.end(body);
  });
}

async function login(url: string, username: string, password: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', ...headers }, body: JSON.stringify({ username, password }) });
  await res.body?.cancel();
  return res.status;
}

export default async function edge(dist: string) {
  await withPactum(dist, { AUTH_ADDRESS_BACKOFF_AFTER: '1000' }, async ({ run, start }) => {
    run(['org', 'create', 'acme']);
    for (const u of ['dan', 'eve', 'fay']) run(['user', 'create', u, '--org', 'acme', '--role', 'member', '--password-stdin'], `${u}-password-123\n`);
    run(['repo', 'create', 'acme/site']);
    for (const u of ['dan', 'eve', 'fay']) run(['repo', 'grant', 'acme/site', u, 'write']);
    const { url, child } = await start();
    const lfs = `${url}/acme/site.git/info/lfs`;

    const parallel = await Promise.all(Array.from({ length: 40 }, (_, i) => batch(lfs, basic('dan', `guess-${i}`), PROBE).then((r) => r.status)));
    report('40 wrong Basic passwords for one user at once', `${tally(parallel)}${parallel.filter((s) => s === 401).length > 10 ? ' (hole)' : ''}`);

    const withRight = await Promise.all(Array.from({ length: 31 }, (_, i) => batch(lfs, basic('eve', i === 20 ? 'eve-password-123' : `guess-${i}`), PROBE).then((r) => r.status)));
    report('30 wrong Basic passwords and the right one at once', `${tally(withRight)}${withRight.filter((s) => s === 401).length > 10 ? ' (hole)' : ''}`);

    const signIns = await Promise.all(Array.from({ length: 12 }, (_, i) => login(url, 'fay', `nope-${i}`)));
    report('12 wrong sign-ins for one user at once', `${tally(signIns)}${signIns.filter((s) => s === 401).length > 8 ? ' (hole)' : ''}`);

    // Anonymous deep JSON: 8 at once, with /healthz timed meanwhile.
    const before = rss(child.pid!);
    let worst = 0;
    let done = false;
    const flood = Promise.all(Array.from({ length: 8 }, (_, i) => deepPost(url, i % 2 ? '/api/v1/auth/login' : '/api/v1/mcp', 4 << 20))).finally(() => (done = true));
    let peak = before;
    while (!done) {
      const t0 = performance.now();
      await fetch(`${url}/healthz`).then((r) => r.arrayBuffer()).catch(() => null);
      worst = Math.max(worst, performance.now() - t0);
      peak = Math.max(peak, rss(child.pid!));
      await new Promise((r) => setTimeout(r, 10));
    }
    const deep = await flood;
    report('8 anonymous 4 MiB nested-array bodies at once: /healthz worst, RSS', `${tally(deep)}; /healthz worst ${worst.toFixed(0)} ms; RSS +${(peak - before).toFixed(0)} MB${worst > 500 ? ' (hole)' : ''}`);

    // A cross-site form post that unlocks, with the browser's cached Basic credentials.
    const created = await fetch(`${lfs}/locks`, { method: 'POST', headers: { authorization: basic('dan', 'dan-password-123'), accept: LFS_JSON, 'content-type': LFS_JSON }, body: JSON.stringify({ path: 'art/x.psd' }) });
    // dan may be held back by the guesses above: eve's lock serves as well.
    const owner = created.status === 201 ? 'dan' : 'eve';
    const lock = created.status === 201 ? ((await created.json()) as { lock: { id: string } }).lock : await fetch(`${lfs}/locks`, { method: 'POST', headers: { authorization: basic('eve', 'eve-password-123'), accept: LFS_JSON, 'content-type': LFS_JSON }, body: JSON.stringify({ path: 'art/x.psd' }) }).then(async (r) => ((await r.json()) as { lock?: { id: string } }).lock);
    if (lock) {
      const form = await fetch(`${lfs}/locks/${lock.id}/unlock`, { method: 'POST', headers: { authorization: basic(owner, `${owner}-password-123`), 'content-type': 'application/x-www-form-urlencoded', 'content-length': '0', origin: 'http://evil.example' } });
      const json = await fetch(`${lfs}/locks/${lock.id}/unlock`, { method: 'POST', headers: { authorization: basic(owner, `${owner}-password-123`), accept: LFS_JSON, 'content-type': LFS_JSON, origin: 'http://evil.example' }, body: '{}' });
      report('unlock from http://evil.example: form post, JSON post', `${form.status}, ${json.status}${form.status === 200 || json.status === 200 ? ' (hole)' : ''}`);
    } else report('unlock from http://evil.example: form post, JSON post', 'no lock could be made');

  });

  // A sprayer behind a reverse proxy (127.0.0.1 here), then another client of the same proxy;
  // default throttle settings, a server of its own.
  await withPactum(dist, { TRUSTED_PROXIES: '127.0.0.1' }, async ({ run, start }) => {
    run(['org', 'create', 'acme']);
    run(['user', 'create', 'gil', '--org', 'acme', '--role', 'member', '--password-stdin'], 'gil-password-123\n');
    const { url } = await start();
    const sprayed: number[] = [];
    for (let i = 0; i < 40; i++) sprayed.push(await login(url, `nobody-${i}`, 'Summer2026!', { 'x-forwarded-for': '198.51.100.7' }));
    const other = await login(url, 'gil', 'gil-password-123', { 'x-forwarded-for': '198.51.100.8' });
    report('password sprayer behind a proxy, then another client of it signs in', `sprayer ${tally(sprayed)}; other client ${other}${other === 429 ? ' (hole)' : ''}`);
  });
}
