import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchPage, fetchText, ScanFetchError, type FetchOptions } from '../../../src/domain/scan/fetch-page.js';
import { BlockedAddressError, createGuardedLookup } from '../../../src/domain/scan/guarded-agent.js';
import { startFixtureServer, type FixtureServer } from './fixture-server.js';

let site: FixtureServer;
beforeAll(async () => { site = await startFixtureServer(); });
afterAll(async () => { await site.close(); });

const open: FetchOptions = { allowPrivateNetworks: true, timeoutMs: 5_000 };
const guarded: FetchOptions = { allowPrivateNetworks: false, timeoutMs: 5_000 };
/** The fixture server's address is trusted, every other private address is not. */
const onlyFixture: FetchOptions = { ...guarded, allowedAddresses: ['127.0.0.1'] };

async function failure(promise: Promise<unknown>): Promise<ScanFetchError> {
  const err = await promise.then(() => { throw new Error('expected the fetch to fail'); }, (e: unknown) => e);
  expect(err).toBeInstanceOf(ScanFetchError);
  return err as ScanFetchError;
}

describe('fetchPage', () => {
  it('fetches an HTML page on a private address when private networks are allowed', async () => {
    const page = await fetchPage(site.url('/'), open);
    expect(page).toMatchObject({ url: site.url('/'), status: 200, contentType: 'text/html; charset=utf-8' });
    expect(page.html).toContain('<title>Fixture home</title>');
  });

  it('refuses the loopback fixture server when private networks are not allowed', async () => {
    const before = site.requests.length;
    const err = await failure(fetchPage(site.url('/'), guarded));
    expect(err.code).toBe('blocked-address');
    expect(err.message).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(site.requests.length).toBe(before); // refused before connecting
  });

  it('refuses a host name that resolves to loopback (checked in the connection lookup)', async () => {
    const err = await failure(fetchPage(site.url('/').replace('127.0.0.1', 'localhost'), guarded));
    expect(err.code).toBe('blocked-address');
    expect(err.message).toMatch(/localhost resolves to 127\.0\.0\.1/);
  });

  it('refuses IPv6 and IPv4-mapped literals of private addresses', async () => {
    for (const url of ['http://[::1]/', 'http://[::ffff:10.0.0.1]/', 'http://[fd00::1]/', 'http://169.254.169.254/latest/meta-data/', 'http://2130706433/']) {
      expect((await failure(fetchPage(url, guarded))).code, url).toBe('blocked-address');
    }
  });

  it('refuses a redirect to a private address', async () => {
    const target = `http://127.0.0.2:${new URL(site.origin).port}/`;
    const err = await failure(fetchPage(site.url(`/redirect?to=${encodeURIComponent(target)}`), onlyFixture));
    expect(err.code).toBe('blocked-address');
    expect(err.message).toMatch(/redirects elsewhere.*127\.0\.0\.2 is a loopback address/);
  });

  it('follows relative redirects and reports the final URL', async () => {
    const page = await fetchPage(site.url('/redirect?to=%2Fredirect%3Fto%3D%252Fform.html'), onlyFixture);
    expect(page.url).toBe(site.url('/form.html'));
    expect(page.html).toContain('Fixture form');
  });

  it('gives up after maxRedirects', async () => {
    const err = await failure(fetchPage(site.url('/loop'), { ...open, maxRedirects: 3 }));
    expect(err.code).toBe('too-many-redirects');
    expect(err.message).toMatch(/more than 3 times/);
  });

  it.each([
    ['not a url', 'bad-url'],
    ['ftp://example.com/', 'bad-url'],
    ['file:///etc/passwd', 'bad-url'],
    ['http://user:secret@example.com/', 'bad-url'],
  ])('refuses %s', async (url, code) => {
    expect((await failure(fetchPage(url, open))).code).toBe(code);
  });

  it('does not echo credentials back in the error', async () => {
    expect((await failure(fetchPage('http://user:secret@example.com/', open))).message).not.toContain('secret');
  });

  it('reports a non-HTML page as not-html', async () => {
    const err = await failure(fetchPage(site.url('/brochure.pdf'), open));
    expect(err.code).toBe('not-html');
    expect(err.message).toMatch(/application\/pdf/);
    expect((await failure(fetchPage(site.url('/data.json'), open))).code).toBe('not-html');
  });

  it('reports HTTP errors with their status', async () => {
    const err = await failure(fetchPage(site.url('/x'), open));
    expect(err).toMatchObject({ code: 'http-status', status: 404 });
    expect(err.message).toMatch(/HTTP 404 \(the page does not exist\)/);
  });

  it('refuses a body larger than maxBytes, streamed or announced', async () => {
    const chunked = await failure(fetchPage(site.url('/huge?bytes=300000'), { ...open, maxBytes: 100_000 }));
    expect(chunked.code).toBe('too-large');
    const declared = await failure(fetchPage(site.url('/huge-declared?bytes=300000'), { ...open, maxBytes: 100_000 }));
    expect(declared.code).toBe('too-large');
    expect(declared.message).toMatch(/larger than 100000 bytes/);
  });

  it('refuses a body over the default 5 MiB cap', async () => {
    const err = await failure(fetchPage(site.url(`/huge?bytes=${6 * 1024 * 1024}`), open));
    expect(err.code).toBe('too-large');
    expect(err.message).toMatch(/5 MiB/);
  });

  it('times out on a server slow to answer, and on a body that stalls', async () => {
    const started = Date.now();
    expect((await failure(fetchPage(site.url('/slow-headers'), { ...open, timeoutMs: 300 }))).code).toBe('timeout');
    expect((await failure(fetchPage(site.url('/slow-body'), { ...open, timeoutMs: 300 }))).code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('rejects with the caller’s abort reason, not a timeout', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('scan cancelled')), 50);
    await expect(fetchPage(site.url('/slow-headers'), { ...open, signal: controller.signal })).rejects.toThrow('scan cancelled');
  });

  it('reports refused connections as network errors', async () => {
    const err = await failure(fetchPage('http://127.0.0.1:1/', open));
    expect(err.code).toBe('network');
    expect(err.message).toMatch(/refused the connection/);
  });

  it('decodes gzip and legacy charsets', async () => {
    expect((await fetchPage(site.url('/gzip'), open)).html).toContain('<title>Zipped</title>');
    expect((await fetchPage(site.url('/latin1'), open)).html).toContain('Café');
    expect((await fetchPage(site.url('/meta-charset'), open)).html).toContain('Naïve');
  });
});

describe('fetchText', () => {
  it('accepts XML and plain text but not HTML', async () => {
    expect((await fetchText(site.url('/sitemap.xml'), open)).text).toContain(`<loc>${site.origin}/sitemap-pages.xml</loc>`);
    expect((await fetchText(site.url('/sitemap.txt'), open)).text).toBe(`${site.origin}/clean.html\n`);
    expect((await failure(fetchText(site.url('/'), open))).code).toBe('not-html');
  });

  it('applies the same address checks', async () => {
    expect((await failure(fetchText(site.url('/sitemap.xml'), guarded))).code).toBe('blocked-address');
  });
});

describe('createGuardedLookup', () => {
  const lookup = (host: string, all: boolean, policy = { allowPrivateNetworks: false }) =>
    new Promise<unknown>((resolve, reject) => {
      createGuardedLookup(policy)(host, { all }, (err, address) => (err ? reject(err) : resolve(address)));
    });

  it('refuses names that resolve to private addresses', async () => {
    await expect(lookup('localhost', true)).rejects.toBeInstanceOf(BlockedAddressError);
    await expect(lookup('localhost', false)).rejects.toThrow(/localhost resolves to 127\.0\.0\.1/);
  });

  it('answers in the form net.connect asked for', async () => {
    const all = (await lookup('localhost', true, { allowPrivateNetworks: true })) as LookupAddress[];
    expect(all[0]).toMatchObject({ address: '127.0.0.1', family: 4 });
    expect(await lookup('localhost', false, { allowPrivateNetworks: true })).toBe('127.0.0.1');
  });
});
