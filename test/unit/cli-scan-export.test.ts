/**
 * `pactum scan`'s export against a server that answers as pactum does when the token's user or
 * org has its most exports under way (429 with Retry-After, as parallel CI jobs sharing a token
 * meet), and one whose export is cut short: the first is tried again and written whole, the
 * second fails the run (exit 3) rather than leaving a file that looks complete.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { scan } from '../../src/cli/scan.js';

const SARIF = `{"version":"2.1.0","runs":[{"results":[${'{"ruleId":"image-alt"},'.repeat(5000)}{"ruleId":"image-alt"}]}]}\n`;
let server: Server;
let url: string;
const dir = mkdtempSync(join(tmpdir(), 'pactum-cli-export-'));
const asked: string[] = [];
let busyAnswers = 0;
let cut = false;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/api/v1/mcp') {
      let body = '';
      req.on('data', (d: Buffer) => (body += String(d)));
      req.on('end', () => {
        const name = (JSON.parse(body) as { params: { name: string } }).params.name;
        const result = {
          dashboard_scan_site: { scanId: 'scn_cli' },
          dashboard_get_scan_progress: { status: 'completed', finished: true, pagesScanned: 1, totalPages: 1 },
          dashboard_get_report: { digest: { summary: { pagesScanned: 1, pagesFailed: 0, totalIssues: 0, byLevel: { error: 0, warning: 0, notice: 0 } }, rules: [] } },
        }[name];
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { structuredContent: result, content: [] } }));
      });
      return;
    }
    asked.push(req.url!);
    if (busyAnswers > 0) {
      busyAnswers--;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
      res.end(JSON.stringify({ error: 'Too Many Requests', statusCode: 429, message: 'You have 2 report downloads under way (REPORT_EXPORTS_PER_USER=2)' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/sarif+json' });
    if (cut) {
      res.write(SARIF.slice(0, 1000));
      setTimeout(() => res.destroy(), 50);
      return;
    }
    res.end(SARIF);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (output: string) => scan(['https://example.com/', '--server', url, '--token', 't', '--format', 'sarif', '--output', output, '--fail-on', 'none']);

it('tries a busy export again after Retry-After, and writes it whole', async () => {
  vi.spyOn(console, 'log').mockImplementation(() => {});
  const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
  busyAnswers = 2;
  asked.length = 0;
  const out = join(dir, 'a.sarif');
  expect(await run(out)).toBe(0);
  expect(asked).toEqual(['/reports/scn_cli.sarif', '/reports/scn_cli.sarif', '/reports/scn_cli.sarif']);
  expect(readFileSync(out, 'utf8')).toBe(SARIF);
  expect(errors.mock.calls.some(([line]) => String(line).includes('REPORT_EXPORTS_PER_USER'))).toBe(true);
  vi.restoreAllMocks();
});

it('fails the run when the export is cut short', async () => {
  vi.spyOn(console, 'log').mockImplementation(() => {});
  vi.spyOn(console, 'error').mockImplementation(() => {});
  cut = true;
  expect(await run(join(dir, 'b.sarif'))).toBe(3);
  cut = false;
  vi.restoreAllMocks();
});

it('asks for SARIF with the source mappings given, and for the pa11y export at its own path', async () => {
  vi.spyOn(console, 'log').mockImplementation(() => {});
  vi.spyOn(console, 'error').mockImplementation(() => {});
  asked.length = 0;
  expect(await scan(['https://example.com/', '--server', url, '--token', 't', '--format', 'sarif', '--output', join(dir, 'c.sarif'), '--fail-on', 'none',
    '--source-map', 'https://example.com/docs/=site/docs/', '--source-map', 'https://example.com/=site/'])).toBe(0);
  expect(await scan(['https://example.com/', '--server', url, '--token', 't', '--format', 'pa11y', '--output', join(dir, 'gl-accessibility.json'), '--fail-on', 'none'])).toBe(0);
  expect(asked).toEqual([
    `/reports/scn_cli.sarif?sourceMap=${encodeURIComponent('https://example.com/docs/=site/docs/')}&sourceMap=${encodeURIComponent('https://example.com/=site/')}`,
    '/reports/scn_cli.pa11y.json',
  ]);
  // A mapping that is no PREFIX=DIR, or one without SARIF, is a usage mistake before anything is asked.
  await expect(scan(['https://example.com/', '--server', url, '--token', 't', '--format', 'sarif', '--output', join(dir, 'd.sarif'), '--source-map', 'https://example.com/=../up'])).rejects.toThrow(/--source-map .*without \.\./);
  await expect(scan(['https://example.com/', '--server', url, '--token', 't', '--format', 'csv', '--output', join(dir, 'd.csv'), '--source-map', 'https://example.com/=site/'])).rejects.toThrow(/with --format sarif/);
  vi.restoreAllMocks();
});
