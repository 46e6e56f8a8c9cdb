/**
 * Load from wrk (Debian's `wrk` package) when it is installed. autocannon is JavaScript: on a
 * two-core machine it shares the cores with the server it drives and tops out near 2,000 MCP calls
 * a second whatever the server, so a faster server and a slower one read the same. wrk is C, one
 * thread, a fraction of the CPU per request: what it measures is the server.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface WrkRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  connections?: number;
  /** Seconds. */
  duration?: number;
}

export interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

export const hasWrk = (() => {
  let found: boolean | undefined;
  return () => {
    if (found === undefined) {
      try {
        execFileSync('sh', ['-c', 'command -v wrk'], { stdio: 'ignore' });
        found = true;
      } catch {
        found = false;
      }
    }
    return found;
  };
})();

// The body is read from a file by the script's init (per thread), and the summary is printed as
// one JSON line (latencies in microseconds).
const SCRIPT = `
local body_file = os.getenv("WRK_BODY_FILE")
local method = os.getenv("WRK_METHOD")
function init(args)
  wrk.method = method
  if body_file and body_file ~= "" then
    local f = io.open(body_file, "rb"); wrk.body = f:read("*a"); f:close()
  end
end
function done(summary, latency, requests)
  io.write(string.format('{"requests":%d,"duration":%d,"p50":%d,"p99":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout))
end
`;

export async function wrkLoad(r: WrkRequest): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'pactum-wrk-'));
  try {
    writeFileSync(join(dir, 'load.lua'), SCRIPT);
    if (r.body !== undefined) writeFileSync(join(dir, 'body'), r.body);
    const args = ['-t1', `-c${r.connections ?? 32}`, `-d${r.duration ?? 5}s`, '--timeout', '10s', '-s', join(dir, 'load.lua')];
    for (const [k, v] of Object.entries(r.headers ?? {})) args.push('-H', `${k}: ${v}`);
    args.push(r.url);
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('wrk', args, { env: { ...process.env, WRK_BODY_FILE: r.body !== undefined ? join(dir, 'body') : '', WRK_METHOD: r.method ?? 'GET' }, stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}`))));
    });
    const line = out.split('\n').find((l) => l.startsWith('{"requests"'));
    if (!line) throw new Error(`wrk printed no summary:\n${out}`);
    const s = JSON.parse(line) as { requests: number; duration: number; p50: number; p99: number; connect: number; read: number; write: number; status: number; timeout: number };
    return { rps: s.requests / (s.duration / 1e6), p50: Math.round(s.p50 / 100) / 10, p99: Math.round(s.p99 / 100) / 10, errors: s.connect + s.read + s.write + s.timeout, non2xx: s.status };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
