/**
 * What the report routes are given by the composition (app/services.ts): each factory names the
 * parts it takes (Pick).
 */
import type { Config } from '../ground/config.js';
import type { Db } from '../db/knex.js';
import type { Logger } from '../telemetry/log.js';
import type { Compute } from '../compute/compute.js';
import type { ScreenshotStore } from './screenshots.js';
import type { ReportSlots } from './slots.js';
import type { ChromiumEngine } from '../domain/scan/chromium/engine.js';

export interface ReportDeps {
  config: Config;
  db: Db;
  log: Logger;
  compute: Compute;
  /** Screenshots of failing elements, readable by those who may read their scan's report. */
  screenshots: ScreenshotStore;
  /** The caps on report downloads under way, per user and per org: the page and the three exports count against them. */
  reportSlots: ReportSlots;
  /** The Chromium engine that prints the ACR as PDF, when this server runs Chromium; null otherwise. */
  browser(): ChromiumEngine | null;
}
