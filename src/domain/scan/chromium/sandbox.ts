/**
 * Chromium's sandbox: its renderers (where a scanned page's markup and scripts run) in namespaces
 * of their own under seccomp-bpf, so that a page exploiting a renderer bug is still held in the
 * renderer. Any member chooses the pages a scan loads, so the sandbox is on wherever it can be:
 *
 * - as a user other than root, Chromium runs sandboxed (Debian's chromium uses unprivileged user
 *   namespaces; it has no setuid helper unless chromium-sandbox is installed);
 * - as root, Chromium refuses to start sandboxed, so it runs with --no-sandbox, and the server
 *   says so once at start-up (ROOT_WARNING);
 * - where the sandbox cannot start (user namespaces switched off and no setuid helper: Chromium
 *   exits with "No usable sandbox!"), the engine starts it again without, saying so once
 *   (UNAVAILABLE_WARNING), rather than fail every scan.
 *
 * The other isolation stays in every case: each request is intercepted and made through the
 * scan's address policy, and each scan gets a browser context of its own.
 */

export interface SandboxChoice {
  /** Whether Chromium's sandbox is on. */
  sandboxed: boolean;
  /** What the launch adds to the engine's flags. */
  flags: readonly string[];
}

export const SANDBOXED: SandboxChoice = { sandboxed: true, flags: [] };
export const UNSANDBOXED: SandboxChoice = { sandboxed: false, flags: ['--no-sandbox'] };

/** The choice for a process running as `uid` (undefined where there are no uids): unsandboxed only as root. */
export function sandboxFor(uid: number | undefined): SandboxChoice {
  return uid === 0 ? UNSANDBOXED : SANDBOXED;
}

/** This process's uid. */
export const processUid = (): number | undefined => process.getuid?.();

export const ROOT_WARNING =
  "pactum runs as root, so Chromium runs without its sandbox (--no-sandbox): a scanned page that exploits a browser bug would run code as root on this machine. Run pactum as a non-root user to keep Chromium sandboxed (request interception and a fresh browser context per scan stay on either way)";

export const UNAVAILABLE_WARNING =
  "Chromium's sandbox is not available on this machine (no unprivileged user namespaces and no chromium-sandbox setuid helper), so Chromium runs without it (--no-sandbox): a scanned page that exploits a browser bug would run code as pactum's user. Enable user namespaces (kernel.unprivileged_userns_clone, or the AppArmor userns restriction) or install chromium-sandbox";

/** Whether Chromium's output says it could not start its sandbox. */
export const sandboxUnavailable = (output: string): boolean => /No usable sandbox/i.test(output);
