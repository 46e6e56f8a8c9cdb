/** Runs the `pactum` command (from sources, through tsx) as a separate process. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const main = join(import.meta.dirname, '..', '..', 'src', 'cli', 'main.ts');
// By URL: the command may run in a directory outside the checkout.
const tsx = import.meta.resolve('tsx');

/** `cwd`: where it runs (the settings file pactum.env is looked for from there upward). */
export function pactum(args: string[], env: Record<string, string>, stdin?: string, opts: { cwd?: string } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', tsx, main, ...args], { env: { ...process.env, LOG_LEVEL: 'error', ...env }, cwd: opts.cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    // A command that exits without reading stdin closes the pipe (EPIPE): its exit says what happened.
    child.stdin.on('error', () => {});
    child.stdin.end(stdin ?? '');
  });
}
