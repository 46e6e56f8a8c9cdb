/** Runs a command without blocking the event loop (the test server lives in this process). */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const root = join(import.meta.dirname, '..', '..');
export const clientsDir = join(root, '.build', 'clients');

export interface RunResult { code: number; output: string }

export function run(command: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd ?? root, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

/** The client `make clients` wrote, or an error that says to run it. */
export function requireClient(language: 'typescript' | 'java' | 'python' | 'go', marker: string): string {
  const dir = join(clientsDir, language);
  if (!existsSync(join(dir, marker))) throw new Error(`${join(dir, marker)} is missing: run \`make clients\` first`);
  return dir;
}
