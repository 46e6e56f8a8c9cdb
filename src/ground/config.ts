/**
 * The environment, validated once at start-up. Every setting, its default and its meaning is
 * listed here and in the README; a bad value stops the process with a message naming it.
 */
import { availableParallelism } from 'node:os';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
// zod's tree-shakable build: the settings are read once, at start-up, and the full build (its
// schema classes give every instance its own methods) held ~1 MB more of an idle server for that.
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { trustedProxies } from './address-list.js';
import { defaultMaxConnections } from './descriptor-limit.js';
import { defaultDataDir } from './default-data-dir.js';

// The messages an operator reads ("Too small: expected number to be >=1"); the full build sets them itself.
z.config(en());

const bool = z.pipe(
  z.enum(['true', 'false', '1', '0', 'yes', 'no']),
  z.transform((v) => v === 'true' || v === '1' || v === 'yes'),
);
const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().check(z.int(), z.gte(min), z.lte(max));
const list = z.pipe(
  z.string(),
  z.transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean)),
);

const schema = z.object({
  PORT: z._default(int(0, 65535), 8080),
  HOST: z._default(z.string().check(z.minLength(1)), '127.0.0.1'),
  /** Unset: ./data from a checkout, the XDG data directory from the installed package (data-dir.ts). */
  DATA_DIR: z.optional(z.string().check(z.minLength(1))),
  PUBLIC_URL: z.optional(z.url()),
  /** Where documentation_url in object-API error bodies points. Default: this server's landing page, PUBLIC_URL/#object-api-errors. */
  LFS_ERROR_DOCS_URL: z.optional(z.url()),
  LOG_LEVEL: z._default(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
  /** json: one JSON object a line (for a log collector); pretty: coloured lines for a person at a terminal. */
  LOG_FORMAT: z._default(z.enum(['json', 'pretty']), 'json'),
  /** A second listener serving only GET /metrics and GET /healthz, outside the main port's connection caps (0: any free port); unset: none. */
  METRICS_PORT: z.optional(int(0, 65535)),
  /** The address of the METRICS_PORT listener. */
  METRICS_HOST: z._default(z.string().check(z.minLength(1)), '127.0.0.1'),
  /** A bearer token that opens GET /metrics on the main port (and is then required on METRICS_PORT too); unset: /metrics is 404 on the main port. */
  METRICS_TOKEN: z.optional(z.string().check(z.minLength(16, 'METRICS_TOKEN must have at least 16 characters'))),
  /** OTLP/HTTP endpoint traces are exported to (the OpenTelemetry SDK is loaded only when this is set). */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.optional(z.url()),
  /** postgres://… selects PostgreSQL; unset means SQLite in DATA_DIR. */
  DATABASE_URL: z.optional(z.string()),
  /** HS256 key (at least 32 characters). Unset: a key generated into DATA_DIR/keys at first start. */
  JWT_SECRET: z.optional(z.string().check(z.minLength(32, 'JWT_SECRET must have at least 32 characters'))),
  /** Verify RS256/ES256 tokens with this JWKS instead of the HS256 key. */
  JWT_JWKS_URL: z.optional(z.url()),
  /** Expected `iss` of tokens; unset accepts any issuer. `pactum token` sets PUBLIC_URL. */
  JWT_ISSUER: z.optional(z.string()),
  /** 32 bytes, hex or base64, for AES-256-GCM of stored secrets. Unset: a key in DATA_DIR/keys. */
  SECRETS_KEY: z.optional(z.string()),
  /** Dynamic Client Registration (RFC 7591) at /oauth/register, the deprecated fallback for MCP clients without Client ID Metadata Documents. */
  OAUTH_DCR: z._default(bool, false),
  /** An external authorization server's issuer URL: the protected resource metadata names it and pactum's own is off; its JWT access tokens are verified with JWT_JWKS_URL, or the jwks_uri of its metadata. Unset: pactum is its own authorization server. */
  OAUTH_ISSUER: z.optional(z.url()),
  /** With OAUTH_ISSUER: the claim of an access token that holds the pactum username it stands for. */
  OAUTH_USER_CLAIM: z.optional(z.string().check(z.regex(/^[A-Za-z0-9_.:/-]{1,100}$/, 'OAUTH_USER_CLAIM must be a claim name (letters, digits, _ . : / -)'))),
  /** Origins whose browser pages may read the answers of the bearer-only endpoints (MCP with a bearer token, OAuth metadata, token, registration, revocation): * (any) or a comma-separated list. */
  CORS_ORIGINS: z.optional(list),
  /** Lifetime of an OAuth access token, in seconds. */
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: z._default(int(30, 86_400), 600),
  /** Lifetime of an OAuth refresh token (and of its grant while unused), in seconds. */
  OAUTH_REFRESH_TOKEN_TTL_SECONDS: z._default(int(60, 365 * 86_400), 30 * 86_400),
  /** Largest Client ID Metadata Document fetched, in bytes. */
  OAUTH_CLIENT_METADATA_MAX_BYTES: z._default(int(512, 1024 * 1024), 5 * 1024),
  /** How long a Client ID Metadata Document fetch may take, in milliseconds. */
  OAUTH_CLIENT_METADATA_TIMEOUT_MS: z._default(int(100, 60_000), 2500),
  /** PEM file of certificate authorities trusted (besides the system's) when fetching Client ID Metadata Documents (an intranet's CA). */
  OAUTH_CLIENT_METADATA_CA_FILE: z.optional(z.string().check(z.minLength(1))),
  /** Origins allowed to call /api/v1 from a browser. Default: PUBLIC_URL's origin. */
  ALLOWED_ORIGINS: z.optional(list),
  /** Host headers accepted on /api/v1 (DNS-rebinding protection). Default: PUBLIC_URL's host, localhost, 127.0.0.1 and ::1 at PORT. */
  ALLOWED_HOSTS: z.optional(list),
  /** Largest JSON body accepted (bytes). */
  MAX_JSON_BYTES: z._default(int(1024), 4 * 1024 * 1024),
  /** Largest JSON body of a request without credentials (sign-in, public object reads; bytes). */
  MAX_ANONYMOUS_JSON_BYTES: z._default(int(1024), 64 * 1024),
  SESSION_TTL_SECONDS: z._default(int(60), 8 * 3600),
  /** Timeout of each call to a connected service (token, health, API). */
  SERVICE_TIMEOUT_MS: z._default(int(100), 10_000),
  SHUTDOWN_TIMEOUT_MS: z._default(int(0), 15_000),
  /** Lifetime of the signed hrefs in object-API actions and links. */
  LFS_ACTION_TTL_SECONDS: z._default(int(60, 7 * 86400), 3600),
  /** Most objects one batch request may name (413 beyond). git-lfs sends at most 100. */
  LFS_MAX_BATCH_OBJECTS: z._default(int(1), 1000),
  /** Largest batch request body (bytes; 413 beyond, before the body is parsed). 1,000 objects take about 100 kB. */
  LFS_MAX_BATCH_BYTES: z._default(int(1024), 1024 * 1024),
  /** Object-API requests a user (or an anonymous address) may make a minute; 0: no limit. */
  LFS_RATE_LIMIT_PER_MINUTE: z._default(int(0), 0),
  /** Refuse uploads (507) when the store has less free space than this; 0: no floor. */
  LFS_MIN_FREE_BYTES: z._default(int(0), 0),
  /** Bytes a repository may serve a day (509 beyond); 0: no quota. */
  LFS_BANDWIDTH_QUOTA_BYTES_PER_DAY: z._default(int(0), 0),
  /** Where object bytes live: fs (files under DATA_DIR/lfs) or s3 (an S3-compatible bucket). */
  STORAGE: z._default(z.enum(['fs', 's3']), 'fs'),
  /** STORAGE=s3: the bucket (it must exist). */
  S3_BUCKET: z.optional(z.string().check(z.minLength(3))),
  /** STORAGE=s3: the endpoint of a non-AWS service (MinIO, Ceph RGW, …); unset means AWS. */
  S3_ENDPOINT: z.optional(z.url()),
  S3_REGION: z._default(z.string().check(z.minLength(1)), 'us-east-1'),
  /** STORAGE=s3: static credentials; unset means the AWS SDK's default chain (environment, profile, instance role). */
  S3_ACCESS_KEY_ID: z.optional(z.string().check(z.minLength(1))),
  S3_SECRET_ACCESS_KEY: z.optional(z.string().check(z.minLength(1))),
  /** Path-style URLs (bucket in the path): what MinIO and Ceph usually need. */
  S3_FORCE_PATH_STYLE: z._default(bool, false),
  /** Key prefix inside the bucket, so one bucket can serve several installs. */
  S3_PREFIX: z._default(z.string().check(z.regex(/^([A-Za-z0-9._-]+\/)*$/, 'S3_PREFIX must be empty or end with / (letters, digits, . _ -)')), ''),
  /** Part size of multipart uploads (MiB, at least 5: S3's minimum). */
  S3_PART_SIZE_MB: z._default(int(5, 5120), 16),
  /**
   * Downloads straight from the bucket: download actions and links are presigned S3 URLs, so the
   * bytes do not pass through pactum (Gitea calls this SERVE_DIRECT). Clients must reach
   * S3_ENDPOINT; a revoked grant stops new actions but not one already handed out (it expires
   * after LFS_ACTION_TTL_SECONDS); bandwidth is counted when the actions are given.
   */
  S3_SERVE_DIRECT: z._default(bool, false),
  /** A resumable (tus) upload is held by one request at a time; a holder that vanished loses it after this. */
  LFS_UPLOAD_LEASE_SECONDS: z._default(int(2, 3600), 30),
  /** A resumable (tus) upload nothing was appended to for this long is removed. */
  TUS_PARTIAL_TTL_SECONDS: z._default(int(1, 365 * 86400), 86400),
  /** Bytes that unfinished resumable (tus) uploads to one repository may declare together (507 beyond); 0: no cap. */
  LFS_PARTIAL_BYTES_PER_REPO: z._default(int(0), 10 * 1024 ** 3),
  /** Bytes that unfinished resumable (tus) uploads to the repositories of one org may declare together (507 beyond); 0: no cap. */
  LFS_PARTIAL_BYTES_PER_ORG: z._default(int(0), 40 * 1024 ** 3),
  /** How often the store is swept of expired resumable uploads and of what dead uploads left. */
  STORAGE_SWEEP_INTERVAL_SECONDS: z._default(int(1, 86400), 600),
  /** Key of the transfer tokens in action headers (32 bytes, hex or base64). Unset: a key in DATA_DIR/keys. */
  TRANSFER_TOKEN_SECRET: z.optional(z.string()),
  /** Scans run at once in this process. */
  SCAN_CONCURRENCY: z._default(int(1, 16), 2),
  /** Scans one org may have running at once, across all instances. Default: SCAN_CONCURRENCY − 1 (at least 1), so one worker stays free for other orgs. */
  SCAN_MAX_RUNNING_PER_ORG: z.optional(int(1, 1000)),
  /** Scans one org may have waiting; dashboard_scan_site past it is refused (rate_limited, with retryAfterSeconds). */
  SCAN_MAX_QUEUED_PER_ORG: z._default(int(1, 100_000), 100),
  /** A scan running longer than this fails with the reason. */
  SCAN_TIMEOUT_SECONDS: z._default(int(10, 7 * 86400), 3600),
  /** PostgreSQL only: how often the job queue looks for expired jobs (workers that died). */
  SCAN_QUEUE_MAINTENANCE_SECONDS: z._default(int(1, 3600), 60),
  /** PostgreSQL: how often an idle instance asks the job queue for scans. Either database: how often a running scan looks at its row (a scan cancelled elsewhere stops). */
  SCAN_QUEUE_POLL_SECONDS: z._default(int(1, 60), 2),
  /** What checks pages: chromium (headless Chromium), jsdom (no browser), auto (Chromium when its executable is there). */
  SCAN_ENGINE: z._default(z.enum(['auto', 'chromium', 'jsdom']), 'auto'),
  /** The Chromium executable (Debian's chromium package by default). */
  CHROMIUM_PATH: z._default(z.string().check(z.minLength(1)), '/usr/bin/chromium'),
  /** One page's check (load, axe, the checks beyond axe) running longer is stopped and the page reported as not checked. */
  SCAN_PAGE_TIMEOUT_SECONDS: z._default(int(2, 600), 30),
  /** Chromium: CPU time a page's renderer (all its threads) may use while the page is checked; past it the page is stopped and reported as not checked. */
  SCAN_PAGE_CPU_SECONDS: z._default(int(1, 3600), 15),
  /**
   * Chromium: pages checked at once in the browser. Default: one more than the cores, since a page
   * spends part of its time waiting (its subresources fetched through the address policy, timers
   * the checks watch), so with only as many pages as cores one core idles meanwhile.
   */
  SCAN_PAGE_SLOTS: z.optional(int(1, 1000)),
  /** Chromium: browser page slots one org's pages may hold at once (site scans and dashboard_scan_page together). Default: the slots less one, at least 1, so one stays free for other orgs. */
  SCAN_PAGE_SLOTS_PER_ORG: z.optional(int(1, 1000)),
  /** dashboard_scan_page calls one org may have waiting for a page slot beyond those being checked; past it the call answers rate_limited with retryAfterSeconds. */
  SCAN_PAGE_MAX_QUEUED_PER_ORG: z._default(int(0, 1000), 4),
  /** Lets scans reach private, loopback and link-local addresses (tests, intranets). */
  SCAN_ALLOW_PRIVATE_NETWORKS: z._default(bool, false),
  /** Lets service-connection calls (oauth, health, compliance, llm) reach private and loopback addresses. */
  OUTBOUND_ALLOW_PRIVATE_NETWORKS: z._default(bool, false),
  /**
   * Reverse proxies (addresses or CIDRs) whose forwarding header gives the client's address; unset:
   * none (every client is its connection's address).
   */
  TRUSTED_PROXIES: z.optional(list),
  /** The header those proxies append the client's address to. */
  TRUSTED_PROXY_HEADER: z._default(z.enum(['x-forwarded-for', 'forwarded']), 'x-forwarded-for'),
  /** Failed password checks of one username from one address before back-off (429) begins. */
  AUTH_BACKOFF_AFTER: z._default(int(1), 5),
  /** Failed password checks from one address, across usernames, before back-off begins. */
  AUTH_ADDRESS_BACKOFF_AFTER: z._default(int(1), 30),
  /** Failed password checks of one username, across addresses, after which its checks are slowed (never refused). */
  AUTH_USER_SLOW_AFTER: z._default(int(1), 100),
  /** Worker threads for the compute behind tools (fix drafts, diffs, report digests, brand scores). Default: the cores less one for the event loop, 2 to 4 (with two or more, one organization's tasks never hold them all). */
  COMPUTE_THREADS: z._default(int(1, 64), Math.max(2, Math.min(4, availableParallelism() - 1))),
  /** Compute tasks that may wait for a thread; past it a tool answers rate_limited with retryAfterSeconds. */
  COMPUTE_QUEUE: z._default(int(1, 10_000), 16),
  /** A compute task running longer is abandoned (its thread replaced) and the tool answers timed_out. */
  COMPUTE_TIMEOUT_MS: z._default(int(100, 600_000), 30_000),
  /** How much lower the compute threads' scheduling priority is than the event loop's (Linux niceness, 0-19): the loop's short requests go first. */
  COMPUTE_NICE: z._default(int(0, 19), 10),
  /** Compute tasks of one organization running at once. Default: COMPUTE_THREADS less one (at least one), so the others always find a thread. */
  COMPUTE_MAX_RUNNING_PER_ORG: z.optional(int(1, 64)),
  /** Compute tasks of one organization that may wait beside those running; past it its calls answer rate_limited. */
  COMPUTE_MAX_QUEUED_PER_ORG: z._default(int(0, 10_000), 4),
  /** Longest a compute task waits for its turn; past it the call answers timed_out (a report page 503). */
  COMPUTE_WAIT_MS: z._default(int(100, 600_000), 30_000),
  /** Most elements the markup given to dashboard_generate_fix may hold (invalid_arguments beyond, before any drafting). */
  FIX_MAX_ELEMENTS: z._default(int(10, 100_000), 3000),
  /** Deepest nesting of elements the markup given to dashboard_generate_fix may have (invalid_arguments beyond, before any drafting). */
  FIX_MAX_DEPTH: z._default(int(4, 10_000), 128),
  /** The most memory V8's young generation may grow to once the server listens (MiB, both semi-spaces): a flood of cheap requests leaves no more resident than this. */
  HEAP_YOUNG_GENERATION_MB: z._default(int(2, 256), 8),
  /** Longest htmlContext and cssContext dashboard_generate_fix accepts (characters; too_large beyond). At most the schema's 100000. */
  FIX_MAX_CONTEXT_CHARS: z._default(int(1, 100_000), 100_000),
  /** Most issues dashboard_get_report returns in its pages view (too_large beyond: the digest view and dashboard_query_issues page through any number). */
  REPORT_MAX_ISSUES: z._default(int(1), 5000),
  /** Most issues a SARIF, JUnit or CSV export may hold (409 naming it beyond, before any work): its time and its size, streamed as they are. */
  REPORT_EXPORT_MAX_ISSUES: z._default(int(1), 100_000),
  /** Results a SARIF export lists at most (the rest counted in a notification): GitHub code scanning refuses a run of more than 25,000. */
  REPORT_SARIF_MAX_RESULTS: z._default(int(1), 25_000),
  /** Longest a link of dashboard_share_report may work, in days (invalid_arguments naming it beyond). */
  REPORT_SHARE_MAX_DAYS: z._default(int(1, 365), 30),
  /** Live links (not expired, not revoked) one scan's report may have (rate_limited naming it beyond): each is a row. */
  REPORT_SHARES_PER_SCAN: z._default(int(1, 10_000), 20),
  /** Report exports and report pages one user may have under way at once (429 with Retry-After beyond, before any work). */
  REPORT_EXPORTS_PER_USER: z._default(int(1, 1000), 2),
  /** Report exports and report pages one org may have under way at once (429 with Retry-After beyond, before any work). */
  REPORT_EXPORTS_PER_ORG: z._default(int(1, 1000), 4),
  /** Issues read from the database and written at a time by an export or the report page: what one that is not read holds (a larger page is read alone). */
  REPORT_READ_BATCH_ISSUES: z._default(int(1, 100_000), 1000),
  /** Chromium engine: screenshots of failing elements (cropped, outlined) taken per page at most; 0: none. */
  SCREENSHOTS_PER_PAGE: z._default(int(0, 100), 5),
  /** Screenshots taken per scan at most (each page's first failing elements until the scan's share is used). */
  SCREENSHOTS_PER_SCAN: z._default(int(0, 100_000), 100),
  /**
   * Screenshots of one rule's failures per scan at most: a report shows a rule with a few examples,
   * and a site built from templates fails the same rule alike on every page, so more pictures of it
   * cost the scan time and show a reader nothing new. 0: no limit beyond the page's and the scan's.
   */
  SCREENSHOTS_PER_RULE: z._default(int(0, 100_000), 3),
  /** A screenshot is downscaled to at most this many pixels wide (and half of it high). */
  SCREENSHOT_MAX_WIDTH: z._default(int(64, 2000), 480),
  /** webp (smaller) or png (lossless). */
  SCREENSHOT_FORMAT: z._default(z.enum(['webp', 'png']), 'webp'),
  /** WebP quality (1-100). */
  SCREENSHOT_QUALITY: z._default(int(1, 100), 70),
  /** Bytes of screenshots one org may keep; past it its scans still run, without screenshots, and the report says why. 0: none. */
  SCREENSHOTS_BYTES_PER_ORG: z._default(int(0), 1024 * 1024 * 1024),
  /** Screenshots are removed this many days after they were taken (their reports stay). */
  SCREENSHOTS_RETENTION_DAYS: z._default(int(1, 36_500), 30),
  /** A request's headers must arrive within this (slowloris). */
  HTTP_HEADERS_TIMEOUT_MS: z._default(int(100, 600_000), 30_000),
  /** A connection that sends and receives nothing for this long is closed. */
  HTTP_IDLE_TIMEOUT_MS: z._default(int(100, 3_600_000), 120_000),
  /** A request body must arrive at this average rate (bytes/s) over each window after the first; 0: no floor. */
  HTTP_MIN_BODY_RATE: z._default(int(0), 1024),
  /** The window over which HTTP_MIN_BODY_RATE is measured (the first one is a grace period). */
  HTTP_BODY_RATE_WINDOW_MS: z._default(int(100, 600_000), 30_000),
  /** The headers of a request on a connection no credentials have been accepted on (every connection's first request) must arrive within this; at most HTTP_HEADERS_TIMEOUT_MS. */
  HTTP_ANON_HEADERS_TIMEOUT_MS: z._default(int(100, 600_000), 10_000),
  /** Connections open on the main port at once; past it a new one is closed as it is accepted. Default: half of what the descriptor limit leaves after 256 (so a flood cannot take the descriptors files and the database need), at most 10,000. */
  HTTP_MAX_CONNECTIONS: z.optional(int(1, 10_000_000)),
  /** Connections one client address (an IPv6 client: its /64) may hold open at once; past it a new one is closed as it is accepted. Trusted proxies are exempt. */
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: z._default(int(1, 10_000_000), 256),
  /** Password checks (scrypt: 32 MiB, a libuv thread and a core each) run at once in this process; the rest wait their turn, taken by client address in rotation. Default: the cores less one for the event loop, 1 to 2 (half of libuv's four threads, which file I/O needs). */
  AUTH_PASSWORD_CHECKS: z._default(int(1, 64), Math.max(1, Math.min(2, availableParallelism() - 1))),
  /** Password checks that may wait for their turn; past it the check of the address with the most waiting is refused (429 with Retry-After). */
  AUTH_PASSWORD_QUEUE: z._default(int(0, 100_000), 64),
  /** The shortest time between two runs of a schedule (dashboard_set_schedule refuses a cron expression whose runs come closer), in seconds. */
  MONITOR_MIN_INTERVAL_SECONDS: z._default(int(1, 366 * 86_400), 3600),
  /** How often each instance looks for due schedules, finished runs to compare and webhook deliveries to make, in seconds. */
  MONITOR_TICK_SECONDS: z._default(int(1, 3600), 15),
  /** Due schedules started per tick at most (the rest wait for the next tick), and as many finished runs compared. */
  MONITOR_SCHEDULES_PER_TICK: z._default(int(1, 1000), 20),
  /** Schedules one org may have; dashboard_set_schedule past it is refused (rate_limited). */
  MONITOR_MAX_SCHEDULES_PER_ORG: z._default(int(1, 100_000), 100),
  /** Webhooks one org may have; dashboard_create_webhook past it is refused (rate_limited). */
  WEBHOOKS_PER_ORG: z._default(int(1, 1000), 10),
  /** A webhook delivery attempt with no complete answer within this is a failed attempt (timeout), in milliseconds. */
  WEBHOOK_TIMEOUT_MS: z._default(int(100, 120_000), 5000),
  /** Attempts of one delivery before it is failed. */
  WEBHOOK_MAX_ATTEMPTS: z._default(int(1, 20), 5),
  /** The wait before the second attempt, doubled before each later one, in milliseconds. */
  WEBHOOK_RETRY_BASE_MS: z._default(int(10, 86_400_000), 30_000),
  /** Deliveries in a row that fail every attempt before the webhook is disabled (and says so). */
  WEBHOOK_DISABLE_AFTER: z._default(int(1, 1000), 5),
  /** The most of a receiver's answer read (bytes); a longer answer fails the attempt (too_large). */
  WEBHOOK_MAX_RESPONSE_BYTES: z._default(int(0, 16 * 1024 * 1024), 64 * 1024),
});

export type Config = ReturnType<typeof loadConfig>;

/** The names of every setting (docs/configuration.md lists each; a test holds them together). */
export const SETTING_NAMES: readonly string[] = Object.keys(schema.shape);

export class ConfigError extends Error {}

/**
 * OAUTH_ISSUER: an issuer identifier (RFC 8414 §2): https (http only on a loopback host, for a
 * test), no query or fragment; JWT_ISSUER, if also set, must be the same.
 */
function issuerProblems(issuer: string, jwtIssuer: string | undefined): string[] {
  const url = URL.parse(issuer);
  const loopback = url && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  const out: string[] = [];
  if (!url || !(url.protocol === 'https:' || (url.protocol === 'http:' && loopback))) out.push('  OAUTH_ISSUER: must be an https:// URL (http:// only on a loopback host)');
  else if (url.search || url.hash) out.push('  OAUTH_ISSUER: an issuer identifier has no query and no fragment');
  if (jwtIssuer !== undefined && jwtIssuer !== issuer) out.push(`  JWT_ISSUER: with OAUTH_ISSUER it must be unset or the same (${issuer})`);
  return out;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const parsed = schema.safeParse(
    Object.fromEntries(Object.entries(env).filter(([k, v]) => k in schema.shape && v !== undefined && v !== '')),
  );
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const problems: string[] = [];
  if (e.STORAGE === 's3' && !e.S3_BUCKET) problems.push('  S3_BUCKET: required when STORAGE=s3');
  if (e.S3_SERVE_DIRECT && e.STORAGE !== 's3') problems.push('  S3_SERVE_DIRECT: only with STORAGE=s3 (files are served by pactum)');
  if (Boolean(e.S3_ACCESS_KEY_ID) !== Boolean(e.S3_SECRET_ACCESS_KEY)) problems.push('  S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY: set both or neither');
  if (e.OAUTH_ISSUER) problems.push(...issuerProblems(e.OAUTH_ISSUER, e.JWT_ISSUER));
  if (e.OAUTH_USER_CLAIM && !e.OAUTH_ISSUER) problems.push('  OAUTH_USER_CLAIM: only with OAUTH_ISSUER (the claim of its tokens that names a pactum user)');
  for (const origin of e.CORS_ORIGINS ?? []) {
    if (origin !== '*' && URL.parse(origin)?.origin !== origin.replace(/\/$/, '')) problems.push(`  CORS_ORIGINS: ${origin} is not an origin (scheme://host[:port]) or *`);
  }
  if (e.DATABASE_URL && !/^postgres(ql)?:\/\//.test(e.DATABASE_URL)) problems.push('  DATABASE_URL: must be a postgres:// URL (unset means SQLite in DATA_DIR)');
  for (const entry of e.TRUSTED_PROXIES ?? []) {
    try {
      trustedProxies([entry]);
    } catch (err) {
      problems.push(`  TRUSTED_PROXIES: ${(err as Error).message}`);
    }
  }
  if (problems.length) throw new ConfigError(`invalid configuration:\n${problems.join('\n')}`);
  const localHost = e.HOST === '0.0.0.0' || e.HOST === '::' ? '127.0.0.1' : e.HOST;
  const publicUrl = new URL(e.PUBLIC_URL ?? `http://${localHost.includes(':') ? `[${localHost}]` : localHost}:${e.PORT}`);
  const publicBase = publicUrl.href.replace(/\/$/, '');
  const portSuffix = (p: number) => (p === 80 || p === 443 ? '' : `:${p}`);
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: resolve(e.DATA_DIR ?? defaultDataDir(env).dir),
    /** Base of every URL the server hands out (hrefs, audience, metadata); no trailing slash. */
    publicUrl: publicBase,
    /** Whether PUBLIC_URL was set, rather than derived from HOST and PORT. */
    publicUrlExplicit: Boolean(e.PUBLIC_URL),
    errorDocsUrl: e.LFS_ERROR_DOCS_URL ?? `${publicBase}/#object-api-errors`,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    metrics: { port: e.METRICS_PORT ?? null, host: e.METRICS_HOST, token: e.METRICS_TOKEN ?? null },
    otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT ?? null,
    databaseUrl: e.DATABASE_URL ?? null,
    jwt: {
      secret: e.JWT_SECRET ?? null,
      jwksUrl: e.JWT_JWKS_URL ?? null,
      issuer: e.JWT_ISSUER ?? null,
      audience: `${publicBase}/api/v1/mcp`,
    },
    secretsKey: e.SECRETS_KEY ?? null,
    oauth: {
      dcr: e.OAUTH_DCR,
      issuer: e.OAUTH_ISSUER ?? null,
      userClaim: e.OAUTH_USER_CLAIM ?? 'sub',
      accessTtlSeconds: e.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
      refreshTtlSeconds: e.OAUTH_REFRESH_TOKEN_TTL_SECONDS,
      clientMetadataMaxBytes: e.OAUTH_CLIENT_METADATA_MAX_BYTES,
      clientMetadataTimeoutMs: e.OAUTH_CLIENT_METADATA_TIMEOUT_MS,
      clientMetadataCaFile: e.OAUTH_CLIENT_METADATA_CA_FILE ?? null,
    },
    allowedOrigins: e.ALLOWED_ORIGINS ?? [publicUrl.origin],
    /** Origins the bearer-only endpoints answer cross-origin reads to; ['*'] for any. */
    corsOrigins: e.CORS_ORIGINS ?? ['*'],
    allowedHosts:
      e.ALLOWED_HOSTS ??
      [...new Set([publicUrl.host, ...['localhost', '127.0.0.1', '[::1]'].map((h) => `${h}${portSuffix(e.PORT)}`)])],
    trustedProxies: e.TRUSTED_PROXIES ?? [],
    trustedProxyHeader: e.TRUSTED_PROXY_HEADER,
    maxJsonBytes: e.MAX_JSON_BYTES,
    maxAnonymousJsonBytes: Math.min(e.MAX_ANONYMOUS_JSON_BYTES, e.MAX_JSON_BYTES),
    sessionTtlSeconds: e.SESSION_TTL_SECONDS,
    serviceTimeoutMs: e.SERVICE_TIMEOUT_MS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    scanAllowPrivateNetworks: e.SCAN_ALLOW_PRIVATE_NETWORKS,
    outboundAllowPrivateNetworks: e.OUTBOUND_ALLOW_PRIVATE_NETWORKS,
    scanConcurrency: e.SCAN_CONCURRENCY,
    scanMaxRunningPerOrg: e.SCAN_MAX_RUNNING_PER_ORG ?? Math.max(1, e.SCAN_CONCURRENCY - 1),
    scanMaxQueuedPerOrg: e.SCAN_MAX_QUEUED_PER_ORG,
    scanTimeoutSeconds: e.SCAN_TIMEOUT_SECONDS,
    scanEngine: e.SCAN_ENGINE,
    chromiumPath: e.CHROMIUM_PATH,
    scanPageTimeoutSeconds: e.SCAN_PAGE_TIMEOUT_SECONDS,
    scanPageCpuSeconds: e.SCAN_PAGE_CPU_SECONDS,
    /** Unset: one more than the cores. */
    scanPageSlots: e.SCAN_PAGE_SLOTS ?? null,
    /** Unset: the engine's page slots less one (it knows how many it has). */
    scanPageSlotsPerOrg: e.SCAN_PAGE_SLOTS_PER_ORG ?? null,
    scanPageMaxQueuedPerOrg: e.SCAN_PAGE_MAX_QUEUED_PER_ORG,
    heapYoungGenerationMb: e.HEAP_YOUNG_GENERATION_MB,
    compute: {
      threads: e.COMPUTE_THREADS,
      maxQueue: e.COMPUTE_QUEUE,
      timeoutMs: e.COMPUTE_TIMEOUT_MS,
      nice: e.COMPUTE_NICE,
      maxRunningPerOrg: Math.min(e.COMPUTE_THREADS, e.COMPUTE_MAX_RUNNING_PER_ORG ?? Math.max(1, e.COMPUTE_THREADS - 1)),
      maxQueuedPerOrg: e.COMPUTE_MAX_QUEUED_PER_ORG,
      waitMs: e.COMPUTE_WAIT_MS,
    },
    fixMaxContextChars: e.FIX_MAX_CONTEXT_CHARS,
    fixBudget: { maxElements: e.FIX_MAX_ELEMENTS, maxDepth: e.FIX_MAX_DEPTH },
    reportMaxIssues: e.REPORT_MAX_ISSUES,
    reports: { exportMaxIssues: e.REPORT_EXPORT_MAX_ISSUES, sarifMaxResults: e.REPORT_SARIF_MAX_RESULTS, shareMaxDays: e.REPORT_SHARE_MAX_DAYS, sharesPerScan: e.REPORT_SHARES_PER_SCAN, perUser: e.REPORT_EXPORTS_PER_USER, perOrg: e.REPORT_EXPORTS_PER_ORG, readBatchIssues: e.REPORT_READ_BATCH_ISSUES },
    screenshots: { perPage: e.SCREENSHOTS_PER_PAGE, perScan: e.SCREENSHOTS_PER_SCAN, perRule: e.SCREENSHOTS_PER_RULE, maxWidth: e.SCREENSHOT_MAX_WIDTH, format: e.SCREENSHOT_FORMAT, quality: e.SCREENSHOT_QUALITY, bytesPerOrg: e.SCREENSHOTS_BYTES_PER_ORG, retentionDays: e.SCREENSHOTS_RETENTION_DAYS },
    authThrottle: { backoffAfter: e.AUTH_BACKOFF_AFTER, addressBackoffAfter: e.AUTH_ADDRESS_BACKOFF_AFTER, userSlowAfter: e.AUTH_USER_SLOW_AFTER },
    passwordChecks: { atOnce: e.AUTH_PASSWORD_CHECKS, queue: e.AUTH_PASSWORD_QUEUE },
    http: {
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      idleTimeoutMs: e.HTTP_IDLE_TIMEOUT_MS,
      minBodyRate: e.HTTP_MIN_BODY_RATE,
      bodyRateWindowMs: e.HTTP_BODY_RATE_WINDOW_MS,
      anonHeadersTimeoutMs: Math.min(e.HTTP_ANON_HEADERS_TIMEOUT_MS, e.HTTP_HEADERS_TIMEOUT_MS),
      maxConnections: e.HTTP_MAX_CONNECTIONS ?? defaultMaxConnections(),
      maxConnectionsPerAddress: e.HTTP_MAX_CONNECTIONS_PER_ADDRESS,
    },
    scanQueue: { maintenanceSeconds: e.SCAN_QUEUE_MAINTENANCE_SECONDS, pollSeconds: e.SCAN_QUEUE_POLL_SECONDS },
    monitor: { minIntervalSeconds: e.MONITOR_MIN_INTERVAL_SECONDS, tickSeconds: e.MONITOR_TICK_SECONDS, perTick: e.MONITOR_SCHEDULES_PER_TICK, maxSchedulesPerOrg: e.MONITOR_MAX_SCHEDULES_PER_ORG },
    webhooks: {
      perOrg: e.WEBHOOKS_PER_ORG, timeoutMs: e.WEBHOOK_TIMEOUT_MS, maxAttempts: e.WEBHOOK_MAX_ATTEMPTS, retryBaseMs: e.WEBHOOK_RETRY_BASE_MS,
      disableAfter: e.WEBHOOK_DISABLE_AFTER, maxResponseBytes: e.WEBHOOK_MAX_RESPONSE_BYTES,
    },
    lfs: {
      actionTtlSeconds: e.LFS_ACTION_TTL_SECONDS,
      maxBatchObjects: e.LFS_MAX_BATCH_OBJECTS,
      maxBatchBytes: e.LFS_MAX_BATCH_BYTES,
      rateLimitPerMinute: e.LFS_RATE_LIMIT_PER_MINUTE,
      minFreeBytes: e.LFS_MIN_FREE_BYTES,
      bandwidthQuotaPerDay: e.LFS_BANDWIDTH_QUOTA_BYTES_PER_DAY,
      transferTokenSecret: e.TRANSFER_TOKEN_SECRET ?? null,
      uploadLeaseSeconds: e.LFS_UPLOAD_LEASE_SECONDS,
      partialTtlSeconds: e.TUS_PARTIAL_TTL_SECONDS,
      partialBytesPerRepo: e.LFS_PARTIAL_BYTES_PER_REPO,
      partialBytesPerOrg: e.LFS_PARTIAL_BYTES_PER_ORG,
      sweepIntervalSeconds: e.STORAGE_SWEEP_INTERVAL_SECONDS,
    },
    storage:
      e.STORAGE === 's3'
        ? {
            kind: 's3' as const,
            bucket: e.S3_BUCKET!,
            endpoint: e.S3_ENDPOINT ?? null,
            region: e.S3_REGION,
            accessKeyId: e.S3_ACCESS_KEY_ID ?? null,
            secretAccessKey: e.S3_SECRET_ACCESS_KEY ?? null,
            forcePathStyle: e.S3_FORCE_PATH_STYLE,
            prefix: e.S3_PREFIX,
            partSize: e.S3_PART_SIZE_MB * 1024 * 1024,
            serveDirect: e.S3_SERVE_DIRECT,
          }
        : { kind: 'fs' as const },
  };
}

/** The settings file the server and the CLI read: in the working directory or the nearest parent. */
export const SETTINGS_FILE = 'pactum.env';

export interface Settings {
  /** The environment over the settings file: what loadConfig reads. */
  env: NodeJS.ProcessEnv;
  /** The settings file read, or null. */
  file: string | null;
  /** Where each setting of the file or the environment came from. */
  sourceOf(name: string): string;
}

/** The nearest settings file from `dir` upward, or null. */
export function findSettingsFile(dir: string): string | null {
  for (let d = resolve(dir); ; d = dirname(d)) {
    const candidate = join(d, SETTINGS_FILE);
    if (existsSync(candidate)) return candidate;
    if (dirname(d) === d) return null;
  }
}

/**
 * NAME=value lines; blank lines and # comments are skipped, `export ` and quotes around the value
 * are allowed. A name that is not a setting is refused (with the nearest one), as a typo would
 * otherwise be ignored silently.
 */
export function parseSettingsFile(text: string, file: string): Record<string, string> {
  const out: Record<string, string> = {};
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) throw new ConfigError(`${file}:${i + 1}: expected NAME=value, found ${line.slice(0, 60)}`);
    const [, name, value] = m as unknown as [string, string, string];
    if (!(name in schema.shape)) {
      const near = nearest(name, SETTING_NAMES);
      throw new ConfigError(`${file}:${i + 1}: ${name} is not a setting${near ? ` (did you mean ${near}?)` : ''}; docs/configuration.md lists them`);
    }
    out[name] = /^(['"])(.*)\1$/.exec(value)?.[2] ?? value;
  });
  return out;
}

/**
 * The settings of this process: the environment, over the settings file (`configFile`, else
 * pactum.env in `cwd` or the nearest parent). A relative DATA_DIR in a file is relative to the
 * file, so every command run anywhere below it reaches the same database.
 */
export function loadSettings(opts: { configFile?: string; cwd?: string; env?: NodeJS.ProcessEnv } = {}): Settings {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  let file: string | null = null;
  if (opts.configFile) {
    file = resolve(cwd, opts.configFile);
    if (!existsSync(file)) throw new ConfigError(`--config ${opts.configFile}: no such file (${file})`);
  } else {
    file = findSettingsFile(cwd);
  }
  const fromFile = file ? parseSettingsFile(readFileSync(file, 'utf8'), file) : {};
  if (file && fromFile.DATA_DIR) fromFile.DATA_DIR = resolve(dirname(file), fromFile.DATA_DIR);
  const set = (name: string) => env[name] !== undefined && env[name] !== '';
  return {
    env: { ...fromFile, ...Object.fromEntries(Object.entries(env).filter(([k]) => set(k))) },
    file,
    sourceOf: (name) => (set(name) ? 'the environment' : name in fromFile ? file! : 'the default'),
  };
}

/** Which database a configuration opens, and where that came from: for a person to check. */
export function describeDatabase(config: { databaseUrl: string | null; dataDir: string }, settings: Settings): string {
  if (config.databaseUrl) {
    const url = new URL(config.databaseUrl);
    url.password = '';
    return `PostgreSQL ${url.href} (DATABASE_URL from ${settings.sourceOf('DATABASE_URL')})`;
  }
  const source = settings.sourceOf('DATA_DIR');
  const why = source === 'the default' ? `DATA_DIR unset: ${defaultDataDir().why}; no ${SETTINGS_FILE} here or above` : `DATA_DIR from ${source}`;
  return `SQLite ${join(config.dataDir, 'pactum.sqlite')} (${why})`;
}

/** The candidate closest to `word` when it is close enough to be a likely typo. */
export function nearest(word: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best !== null && bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : null;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}
