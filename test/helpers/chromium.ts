/**
 * The Chromium the browser tests drive: Debian's /usr/bin/chromium (CHROMIUM_PATH to change).
 * .ci/run installs it; test/global-setup.ts installs it when it is missing and apt-get can (root);
 * without it these tests fail with the command that fixes it, rather than being skipped.
 */
import { accessSync, constants } from 'node:fs';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function requireChromium(): string {
  try {
    accessSync(CHROMIUM, constants.X_OK);
    return CHROMIUM;
  } catch {
    throw new Error(`The browser tests need Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  }
}
