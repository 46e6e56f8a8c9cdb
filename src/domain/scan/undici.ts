/**
 * undici, loaded at its first use: about 20 MB resident that a server which never scans a site
 * or calls a service connection does not need to carry.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const require = createRequire(import.meta.url);
let loaded: typeof Undici | undefined;

export const undici = (): typeof Undici => (loaded ??= require('undici') as typeof Undici);
