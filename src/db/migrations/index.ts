/** Migrations in order. Each module exports up and down; add new ones at the end, never edit old ones. */
import type { Knex } from 'knex';
import * as m001 from './001_core.js';
import * as m002 from './002_sessions.js';
import * as m003 from './003_dashboard.js';
import * as m004 from './004_objects.js';
import * as m005 from './005_accessibility.js';
import * as m006 from './006_upload_leases.js';
import * as m007 from './007_lock_path_key.js';
import * as m009 from './009_credential_version.js';
import * as m010 from './010_auth_failures.js';
import * as m011 from './011_server_settings.js';
import * as m012 from './012_scan_engines.js';
import * as m013 from './013_auth_pending.js';
import * as m014 from './014_partial_reservations.js';
import * as m015 from './015_scan_claims.js';
import * as m016 from './016_scan_screenshots.js';
import * as m017 from './017_principal_changes.js';
import * as m018 from './018_screenshot_quota.js';
import * as m019 from './019_report_shares.js';
import * as m020 from './020_mcp_confirmations.js';
import * as m021 from './021_mcp_tasks.js';
import * as m022 from './022_mcp_task_results.js';
import * as m023 from './023_finding_marks.js';
import * as m024 from './024_oauth.js';
import * as m025 from './025_acr_assessments.js';
import * as m026 from './026_monitoring.js';

const migrations: Record<string, Knex.Migration> = {
  '001_core': m001,
  '002_sessions': m002,
  '003_dashboard': m003,
  '004_objects': m004,
  '005_accessibility': m005,
  '006_upload_leases': m006,
  '007_lock_path_key': m007,
  '009_credential_version': m009,
  '010_auth_failures': m010,
  '011_server_settings': m011,
  '012_scan_engines': m012,
  '013_auth_pending': m013,
  '014_partial_reservations': m014,
  '015_scan_claims': m015,
  '016_scan_screenshots': m016,
  '017_principal_changes': m017,
  '018_screenshot_quota': m018,
  '019_report_shares': m019,
  '020_mcp_confirmations': m020,
  '021_mcp_tasks': m021,
  '022_mcp_task_results': m022,
  '023_finding_marks': m023,
  '024_oauth': m024,
  '025_acr_assessments': m025,
  '026_monitoring': m026,
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: () => Promise.resolve(Object.keys(migrations)),
  getMigrationName: (name) => name,
  getMigration: (name) => Promise.resolve(migrations[name]!),
};
