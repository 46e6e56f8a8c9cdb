/**
 * What the sign-in routes are given by the composition (app/services.ts): each factory names
 * the parts it takes (Pick).
 */
import type { Config } from '../ground/config.js';
import type { Db } from '../db/knex.js';
import type { PasswordThrottle } from './throttle.js';

export interface AuthDeps {
  config: Config;
  db: Db;
  /** Back-off for failed password checks (sign-in and HTTP Basic). */
  passwords: PasswordThrottle;
}
