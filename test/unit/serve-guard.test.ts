/**
 * The production entry's last line of defence (cli/serve.ts guardProcess): an unhandled rejection
 * or an uncaught exception is logged at fatal level with the request it came from, the server is
 * shut down, and the process exits non-zero for its supervisor. Each case runs in a child process.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = (path: string) => JSON.stringify(join(import.meta.dirname, '..', '..', 'src', path));

function run(fault: string): Promise<{ code: number | null; lines: Record<string, unknown>[] }> {
  const script = `
    const { guardProcess } = await import(${src('cli/serve.ts')});
    const { requestScope } = await import(${src('http/request-scope.ts')});
    const { createLogger } = await import(${src('telemetry/log.ts')});
    guardProcess(createLogger('info'), async () => console.log(JSON.stringify({ msg: 'shut down' })), 2000);
    requestScope.run({ requestId: 'REQ-42', method: 'GET', path: '/content/x' }, () => { ${fault} });
    setTimeout(() => console.log(JSON.stringify({ msg: 'still running' })), 3000);
  `;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code, lines: out.split('\n').filter(Boolean).map((l) => JSON.parse(l)) }));
  });
}

describe('guardProcess', () => {
  it.each([
    ['unhandledRejection', "Promise.reject(new Error('boom'));"],
    ['uncaughtException', "setTimeout(() => { throw new Error('boom'); }, 10);"],
  ])('logs a %s with its request, shuts down and exits 1', async (kind, fault) => {
    const { code, lines } = await run(fault);
    expect(code).toBe(1);
    const fatal = lines.find((l) => l.level === 60);
    expect(fatal).toMatchObject({ kind, request: { requestId: 'REQ-42', path: '/content/x' }, err: { message: 'boom' } });
    expect(lines.map((l) => l.msg)).toContain('shut down');
    expect(lines.map((l) => l.msg)).not.toContain('still running');
  });
});
