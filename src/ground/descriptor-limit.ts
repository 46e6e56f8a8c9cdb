/**
 * The process's limit on open file descriptors (RLIMIT_NOFILE), which every connection, open
 * object file and database handle counts against: read from /proc/self/limits, since Node has no
 * getrlimit. Node raises its soft limit to the hard one as it starts (on Linux), and `make run`
 * asks the shell to do the same before it; the start line states what the server got.
 */
import { readFileSync } from 'node:fs';

export interface DescriptorLimit {
  soft: number;
  hard: number | null;
}

/** The "Max open files" row of a /proc/<pid>/limits text; null when absent. `unlimited` is null. */
export function parseDescriptorLimit(limits: string): DescriptorLimit | null {
  const m = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(limits);
  if (!m || m[1] === 'unlimited') return null;
  return { soft: Number(m[1]), hard: m[2] === 'unlimited' ? null : Number(m[2]) };
}

let read: DescriptorLimit | null | undefined;

/** This process's descriptor limit, or null where /proc is not there (not Linux). */
export function descriptorLimit(): DescriptorLimit | null {
  if (read === undefined) {
    try {
      read = parseDescriptorLimit(readFileSync('/proc/self/limits', 'utf8'));
    } catch {
      read = null;
    }
  }
  return read;
}

/**
 * Descriptors kept out of the connection cap's default: the database, the log, the metrics port,
 * Chromium's pipes, the compute threads, the S3 client's sockets.
 */
export const DESCRIPTORS_KEPT = 256;

/** The most connections the default cap allows, whatever the limit (systemd's is 524,288): each holds memory too. */
const MOST_BY_DEFAULT = 10_000;

/**
 * The default cap on open connections: half of what the limit leaves once DESCRIPTORS_KEPT are
 * set aside, since a connection that uploads or downloads an object holds a file too; at most
 * MOST_BY_DEFAULT, which is also the default where the limit cannot be read.
 */
export function defaultMaxConnections(limit: DescriptorLimit | null = descriptorLimit()): number {
  if (!limit) return MOST_BY_DEFAULT;
  return Math.min(MOST_BY_DEFAULT, Math.max(32, Math.floor((limit.soft - DESCRIPTORS_KEPT) / 2)));
}
