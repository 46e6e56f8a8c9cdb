/** Processes of this machine as the scripts and tests that start them look for them (Linux /proc). */
import { readdirSync, readFileSync } from 'node:fs';

/** Whether process `pid` is still there (signal 0 only asks). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The processes whose parent is `pid`, with their command lines. */
export function childrenOf(pid: number): { pid: number; cmdline: string }[] {
  const out: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name (in parentheses) may hold spaces: the fields after it are counted from its end.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push({ pid: Number(entry), cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ') });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}
