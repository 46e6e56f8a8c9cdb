/**
 * Monitoring's parts on their own: cron expressions and the minimum interval, webhook signatures
 * (and how a receiver verifies them), one delivery attempt against a real receiver (refused
 * addresses, redirects, answers too large or too slow), and the settings.
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CronError, checkCron, nextRun } from '../../../src/domain/monitoring/cron.js';
import { newWebhookSecret, signatureHeader, verifySignature } from '../../../src/domain/monitoring/signature.js';
import { postWebhook, refusedHost } from '../../../src/domain/monitoring/post-webhook.js';
import { ConfigError, loadConfig } from '../../../src/ground/config.js';
import { startServer } from '../../../src/server.js';

describe('cron expressions', () => {
  it('finds the next run in UTC, five or six fields', () => {
    expect(nextRun('0 6 * * 1', new Date('2026-12-07T10:00:00Z'))!.toISOString()).toBe('2026-12-14T06:00:00.000Z');
    expect(nextRun('*/10 * * * * *', new Date('2026-12-07T10:00:03Z'))!.toISOString()).toBe('2026-12-07T10:00:10.000Z');
  });

  it('refuses runs closer than the minimum interval, naming the setting', () => {
    expect(() => checkCron('*/5 * * * *', 3600)).toThrow(/runs 300 s apart.*MONITOR_MIN_INTERVAL_SECONDS/);
    // Irregular expressions are judged by their closest two runs: 06:00 and 06:30 every day.
    expect(() => checkCron('0,30 6 * * *', 3600)).toThrow(/1800 s apart/);
    expect(() => checkCron('0 6 * * *', 3600)).not.toThrow();
    expect(() => checkCron('*/2 * * * * *', 2)).not.toThrow();
    expect(() => checkCron('* * * * * *', 2)).toThrow(CronError);
  });

  it('refuses what is not a cron expression', () => {
    for (const bad of ['every day', '61 * * * *', '* * * *', '* * * * * * *', '0 0 31 2 *']) expect(() => checkCron(bad, 60), bad).toThrow(CronError);
  });
});

describe('signatures', () => {
  const secret = newWebhookSecret();
  const body = JSON.stringify({ id: 'dlv_x', event: 'findings.new' });

  it('are HMAC-SHA256 of "t.body", as the docs tell a receiver to check', () => {
    const header = signatureHeader(secret, body, 1_800_000_000);
    const v1 = createHmac('sha256', secret).update(`1800000000.${body}`).digest('hex');
    expect(header).toBe(`t=1800000000,v1=${v1}`);
    expect(verifySignature(secret, header, body, 300, 1_800_000_100_000)).toBe(true);
  });

  it('fail for another body, another secret, an old time (a replay) or a malformed header', () => {
    const now = Date.now();
    const header = signatureHeader(secret, body, Math.floor(now / 1000));
    expect(verifySignature(secret, header, `${body} `, 300, now)).toBe(false);
    expect(verifySignature(newWebhookSecret(), header, body, 300, now)).toBe(false);
    expect(verifySignature(secret, header, body, 300, now + 301_000)).toBe(false);
    for (const bad of ['', 't=abc,v1=00', `v1=${'0'.repeat(64)}`, header.replace(/v1=../, 'v1=zz')]) expect(verifySignature(secret, bad, body, 300, now), bad).toBe(false);
  });
});

describe('a delivery attempt', () => {
  let server: Server;
  let base = '';
  const seen: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.url!);
      if (req.url === '/ok') return void res.writeHead(204).end();
      if (req.url === '/fail') return void res.writeHead(500).end('no');
      if (req.url === '/moved') return void res.writeHead(302, { location: '/ok' }).end();
      if (req.url === '/huge') return void res.writeHead(200).end('x'.repeat(10_000));
      if (req.url === '/slow') return void setTimeout(() => res.writeHead(200).end(), 2000);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const open = { policy: { allowPrivateNetworks: true }, timeoutMs: 1000, maxResponseBytes: 1024 };

  it('is delivered on a 2xx and failed with a class otherwise, never following a redirect', async () => {
    expect(await postWebhook(`${base}/ok`, '{}', {}, open)).toMatchObject({ delivered: true, httpStatus: 204, errorClass: null });
    expect(await postWebhook(`${base}/fail`, '{}', {}, open)).toMatchObject({ delivered: false, httpStatus: 500, errorClass: 'http_status' });
    const before = seen.length;
    expect(await postWebhook(`${base}/moved`, '{}', {}, open)).toMatchObject({ delivered: false, httpStatus: 302, errorClass: 'redirect' });
    expect(seen.slice(before)).toEqual(['/moved']);
    expect(await postWebhook(`${base}/huge`, '{}', {}, open)).toMatchObject({ delivered: false, errorClass: 'too_large' });
    expect(await postWebhook(`${base}/slow`, '{}', {}, { ...open, timeoutMs: 200 })).toMatchObject({ delivered: false, errorClass: 'timeout' });
  });

  it('never reaches a private address unless allowed: by literal, and by a name resolved at connection', async () => {
    const closed = { ...open, policy: { allowPrivateNetworks: false } };
    const before = seen.length;
    expect(await postWebhook(`${base}/ok`, '{}', {}, closed)).toMatchObject({ delivered: false, httpStatus: null, errorClass: 'blocked_address' });
    const port = new URL(base).port;
    expect(await postWebhook(`http://localhost:${port}/ok`, '{}', {}, closed)).toMatchObject({ delivered: false, errorClass: 'blocked_address' });
    expect(seen.length).toBe(before);
    expect(await refusedHost(`http://localhost:${port}/ok`, closed.policy)).toMatch(/loopback/);
    expect(await refusedHost(`http://[::1]:${port}/ok`, closed.policy)).toMatch(/loopback/);
    expect(await refusedHost(`${base}/ok`, open.policy)).toBeNull();
  });
});

describe('settings', () => {
  it('a mistyped monitoring setting stops the start, naming it', async () => {
    for (const [name, value] of [['MONITOR_MIN_INTERVAL_SECONDS', '1h'], ['WEBHOOK_MAX_ATTEMPTS', '0'], ['MONITOR_TICK_SECONDS', 'often'], ['WEBHOOK_TIMEOUT_MS', '5s']]) {
      expect(() => loadConfig({ [name!]: value }), name).toThrow(ConfigError);
      expect(() => loadConfig({ [name!]: value }), name).toThrow(new RegExp(`${name}:`));
    }
    await expect(startServer({ env: { PORT: '0', MONITOR_MIN_INTERVAL_SECONDS: '1h' } })).rejects.toThrow(/MONITOR_MIN_INTERVAL_SECONDS/);
    expect(loadConfig({}).monitor.minIntervalSeconds).toBe(3600);
  });
});
