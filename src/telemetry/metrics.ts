/**
 * The Prometheus metrics of one server, through prom-client: one registry per server (tests run
 * several in one process), exposed at GET /metrics (ops/metrics-endpoint.ts).
 *
 * Labels are bounded sets only: the API, the operationId, the method, the status class, the
 * transfer, the tool, the outcome, the engine, the org class (scans/org-class.ts). Never a user,
 * org, oid, URL or path: each distinct value is a time series kept for as long as the process lives.
 *
 * What can be read when scraped (pools, queues, bytes held) is read then, by collect() callbacks,
 * rather than counted on every request in a hot path. A server nobody can scrape (neither
 * METRICS_PORT nor METRICS_TOKEN) records nothing.
 */
import { createRequire } from 'node:module';
import type { Counter, Gauge, Registry, CounterConfiguration, GaugeConfiguration, HistogramConfiguration, LabelValues, Metric, MetricType } from 'prom-client';

/** Latency buckets (seconds) for requests and tools: a few ms to a long upload. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const PAGE_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120];
const BATCH_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];
/** A phase of a page's check: a few ms (a survey) to seconds (a check that waits, a slow load). */
const PHASE_BUCKETS = [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 1, 2, 5, 10, 30];

const STATUS_CLASSES = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx'];
/** The status class label: one of six constant strings, so a series lookup hashes nothing new. */
export const statusClass = (status: number) => STATUS_CLASSES[Math.floor(status / 100)] ?? `${Math.floor(status / 100)}xx`;

/**
 * The series of one metric kept in plain JS, found by its label values through one Map per label:
 * the values are mostly constant strings whose hashes V8 keeps, so finding a series builds no key.
 */
class Series<L extends string, T> {
  private readonly root = new Map<unknown, unknown>();
  readonly all: T[] = [];
  constructor(
    private readonly names: readonly L[],
    private readonly create: (labels: LabelValues<L>) => T,
  ) {}

  at(labels: LabelValues<L>): T {
    let level = this.root;
    const last = this.names.length - 1;
    if (last < 0) return (this.all[0] ??= this.create({}));
    for (let i = 0; i < last; i++) {
      const value = labels[this.names[i]!];
      let next = level.get(value) as Map<unknown, unknown> | undefined;
      if (!next) level.set(value, (next = new Map()));
      level = next;
    }
    const value = labels[this.names[last]!];
    let leaf = level.get(value) as T | undefined;
    if (leaf === undefined) {
      leaf = this.create({ ...labels });
      level.set(value, leaf);
      this.all.push(leaf);
    }
    return leaf;
  }

  clear() {
    this.root.clear();
    this.all.length = 0;
  }
}

export type Transfer = 'basic' | 'tus';
export type UploadOutcome = 'verified' | 'refused_hash' | 'refused_size' | 'aborted';

/** A scan session open on this instance: its engine and whose scan it is. */
export interface RunningScan {
  engine: string;
  owner: string | undefined;
}

/**
 * The class of an org in the scan queue, as a bounded label where an org id would be one series
 * per org. `at_cap`: the org has SCAN_MAX_RUNNING_PER_ORG scans running (across instances), so its
 * waiting scans wait for its own (typically a flood); `below_cap`: every other org, whose waiting
 * scans wait only for a free scanner.
 */
export type OrgClass = 'at_cap' | 'below_cap';
export const ORG_CLASSES: readonly OrgClass[] = ['at_cap', 'below_cap'];
export const orgClass = (running: number, maxRunningPerOrg: number): OrgClass => (running >= maxRunningPerOrg ? 'at_cap' : 'below_cap');

/** An org with scans waiting or running: how many of each (every instance's). */
export interface OrgScanLoad {
  orgId: string;
  queued: number;
  running: number;
}

/**
 * What the gauges read when scraped, from the parts that know it: set once by the composition
 * (observe), so that metrics know no feature, database or route of their own.
 */
export interface GaugeSources {
  /** The scan queue's load per org, and the per-org cap its classes are taken against. */
  scanLoad?: { load(): Promise<OrgScanLoad[]>; maxRunningPerOrg: number };
  /** The database pool's connections. */
  dbPool?: () => { used: number; free: number; pending: number };
  auditPending?: () => number;
  /** Bytes unfinished resumable uploads declare (all instances). */
  partialBytes?: () => Promise<number>;
  /** The object store's free space, where it can tell (STORAGE=fs). */
  freeBytes?: () => Promise<number | null>;
  /** Password checks of this process, running and waiting. */
  passwordChecks?: () => { running: number; waiting: number };
  /** The worker-thread pools by name, each instance's queued and pending (running + queued) tasks. */
  workerPools?: () => Iterable<[string, Iterable<{ queued: number; pending: number }>]>;
}

/**
 * A metric that records nothing: what every metric is when nobody can read them (neither
 * METRICS_PORT nor METRICS_TOKEN set), so that a server without a scraper pays nothing for them.
 */
const IDLE = {
  inc() {},
  dec() {},
  set() {},
  observe() {},
  reset() {},
  remove() {},
  labels: () => IDLE,
  startTimer: () => () => 0,
  get: () => Promise.resolve({ values: [] }),
};

/** The registry of a server that records nothing: empty, and nothing can scrape it anyway. */
const IDLE_REGISTRY = { metrics: () => Promise.resolve(''), getMetricsAsArray: () => [], contentType: 'text/plain; version=0.0.4; charset=utf-8' } as unknown as Registry;

/**
 * prom-client, loaded only by a server that records metrics: with its dependencies it is ~7 MB
 * of a fresh server's resident memory, which a server nobody scrapes need not pay. Synchronous
 * (a CommonJS package), so createMetrics stays synchronous.
 */
const promClient = () => createRequire(import.meta.url)('prom-client') as typeof import('prom-client');

/** `recording`: false when the metrics cannot be read; every metric is then IDLE and prom-client is not loaded. */
export function createMetrics({ recording = true }: { recording?: boolean } = {}) {
  const prom = recording ? promClient() : null;
  const registry = prom ? new prom.Registry() : IDLE_REGISTRY;
  const r = [registry];
  const counter = <L extends string>(c: CounterConfiguration<L>) => (prom ? new prom.Counter<L>(c) : (IDLE as unknown as Counter<L>));
  const gauge = <L extends string>(c: GaugeConfiguration<L>) => (prom ? new prom.Gauge<L>(c) : (IDLE as unknown as Gauge<L>));
  const histogram = <L extends string>(c: HistogramConfiguration<L> & { buckets: number[] }) => (prom ? binned(c) : (IDLE as unknown as Binned<L>));
  /**
   * A counter of every request, kept in plain JS and handed to prom-client when scraped:
   * prom-client validates and hashes the labels at each inc, which with the label object cost a
   * read tool a few percent of its CPU; here a request pays a Map lookup per label (Series).
   */
  const tallied = <L extends string>(c: CounterConfiguration<L>) => {
    if (!prom) return IDLE as unknown as { inc(labels: LabelValues<L>, n?: number): void; inc(n?: number): void };
    const totals = new Series<L, { labels: LabelValues<L>; n: number }>(c.labelNames ?? [], (labels) => ({ labels, n: 0 }));
    new prom.Counter<L>({
      ...c,
      collect() {
        this.reset();
        for (const t of totals.all) this.inc(t.labels, t.n);
      },
    });
    function inc(labels: LabelValues<L>, n?: number): void;
    function inc(n?: number): void;
    function inc(a?: LabelValues<L> | number, b?: number) {
      const labels = typeof a === 'object' ? a : ({} as LabelValues<L>);
      totals.at(labels).n += typeof a === 'number' ? a : (b ?? 1);
    }
    return { inc };
  };
  /** A gauge of requests under way, read when scraped (an integer here, not a gauge update per request). */
  const underWay = (c: GaugeConfiguration<string>) => {
    if (!prom) return IDLE as unknown as { inc(): void; dec(): void };
    let now = 0;
    new prom.Gauge({
      ...c,
      collect() {
        this.set(now);
      },
    });
    return { inc: () => void now++, dec: () => void now-- };
  };
  const sources: GaugeSources = {};
  const sessions = new Set<RunningScan>();
  const enginesSeen = new Set<string>();
  if (prom) {
    prom.collectDefaultMetrics({ register: registry });
    // Gauges named like counters (promtool refuses them); nodejs_active_handles and the others by type remain.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name);
  }

  const metrics = {
    registry,
    http: {
      requests: tallied({ name: 'pactum_http_requests_total', help: 'HTTP requests answered, by API, operation, method and status class.', labelNames: ['api', 'operation', 'method', 'status_class'] as const, registers: r }),
      duration: histogram({ name: 'pactum_http_request_duration_seconds', help: 'Time from a request’s arrival to the end of its answer, per operation.', labelNames: ['api', 'operation'] as const, buckets: LATENCY_BUCKETS, registers: r }),
      inFlight: underWay({ name: 'pactum_http_requests_in_flight', help: 'HTTP requests being served now.', registers: r }),
      cut: counter({ name: 'pactum_http_requests_cut_total', help: 'Requests whose connection was closed for a slow client, by reason: body_rate (the body arrived below HTTP_MIN_BODY_RATE), anonymous_headers (headers not complete within HTTP_ANON_HEADERS_TIMEOUT_MS).', labelNames: ['reason'] as const, registers: r }),
      connectionsRefused: counter({ name: 'pactum_http_connections_refused_total', help: 'Connections closed as they were accepted, by the cap they met: global (HTTP_MAX_CONNECTIONS), per_address (HTTP_MAX_CONNECTIONS_PER_ADDRESS).', labelNames: ['reason'] as const, registers: r }),
      throttled: counter({ name: 'pactum_http_throttled_total', help: 'Requests refused for their rate or quota (429, 509), by API and operation.', labelNames: ['api', 'operation'] as const, registers: r }),
    },
    objects: {
      uploadedBytes: counter({ name: 'pactum_object_uploaded_bytes_total', help: 'Object bytes received and stored, by API and transfer.', labelNames: ['api', 'transfer'] as const, registers: r }),
      downloadedBytes: counter({ name: 'pactum_object_downloaded_bytes_total', help: 'Object bytes sent, by API and transfer.', labelNames: ['api', 'transfer'] as const, registers: r }),
      uploads: counter({ name: 'pactum_object_uploads_total', help: 'Object uploads that ended, by outcome: verified (hash and size checked and stored), refused_hash, refused_size, aborted.', labelNames: ['api', 'transfer', 'outcome'] as const, registers: r }),
      transfersInFlight: gauge({ name: 'pactum_object_transfers_in_flight', help: 'Object uploads and downloads under way.', labelNames: ['direction'] as const, registers: r }),
      batchObjects: histogram({ name: 'pactum_object_batch_objects', help: 'Objects named by one batch request.', labelNames: ['operation'] as const, buckets: BATCH_BUCKETS, registers: r }),
      sweeps: counter({ name: 'pactum_storage_sweeps_total', help: 'Rounds of storage housekeeping, by outcome (ok, failed).', labelNames: ['outcome'] as const, registers: r }),
      swept: counter({ name: 'pactum_storage_swept_total', help: 'What storage housekeeping removed: temporary files, multipart uploads, expired resumable uploads.', labelNames: ['what'] as const, registers: r }),
      storageErrors: counter({ name: 'pactum_storage_errors_total', help: 'Requests failed by the object storage, by kind (unavailable: S3 did not answer; io, no_space: the file system refused or is full).', labelNames: ['kind'] as const, registers: r }),
      s3Duration: histogram({ name: 'pactum_s3_request_duration_seconds', help: 'Latency of S3 requests, by command.', labelNames: ['command'] as const, buckets: LATENCY_BUCKETS, registers: r }),
    },
    auth: {
      signIns: counter({ name: 'pactum_auth_sign_ins_total', help: 'Password sign-ins, by outcome (ok, refused, throttled).', labelNames: ['outcome'] as const, registers: r }),
      revoked: counter({ name: 'pactum_auth_revoked_refusals_total', help: 'Requests refused because their credential was revoked, changed or its user deactivated.', labelNames: ['api'] as const, registers: r }),
      passwordChecks: gauge({
        name: 'pactum_auth_password_checks', help: 'Password checks (scrypt) of this process, by state: running (at most AUTH_PASSWORD_CHECKS), waiting (at most AUTH_PASSWORD_QUEUE).', labelNames: ['state'] as const, registers: r,
        collect() {
          const load = sources.passwordChecks?.() ?? { running: 0, waiting: 0 };
          this.set({ state: 'running' }, load.running);
          this.set({ state: 'waiting' }, load.waiting);
        },
      }),
    },
    mcp: {
      calls: tallied({ name: 'pactum_mcp_tool_calls_total', help: 'MCP tools/call, by tool and outcome (ok or the tool error code).', labelNames: ['tool', 'outcome'] as const, registers: r }),
      duration: histogram({ name: 'pactum_mcp_tool_duration_seconds', help: 'Time an MCP tool call took, by tool.', labelNames: ['tool'] as const, buckets: LATENCY_BUCKETS, registers: r }),
      auditRows: tallied({ name: 'pactum_audit_rows_written_total', help: 'Audit rows written to the database.', registers: r }),
    },
    scans: {
      running: gauge({
        name: 'pactum_scans_running', help: 'Scans this instance is running, by engine and org class (at_cap: the org has SCAN_MAX_RUNNING_PER_ORG scans running; below_cap: any other org).', labelNames: ['engine', 'org_class'] as const, registers: r,
        async collect() {
          this.reset();
          for (const engine of enginesSeen) for (const c of ORG_CLASSES) this.set({ engine, org_class: c }, 0);
          if (!sessions.size) return;
          // The database not answering leaves every running scan below_cap: counted, if not classed.
          const running = new Map((await loadOrNull(sources.scanLoad))?.map((o) => [o.orgId, o.running]));
          const max = sources.scanLoad?.maxRunningPerOrg ?? Infinity;
          for (const s of sessions) this.inc({ engine: s.engine, org_class: orgClass((s.owner && running.get(s.owner)) || 0, max) });
        },
      }),
      /** The scan sessions open on this instance (engine-metrics.ts adds and removes them). */
      sessions: {
        open(engine: string, owner: string | undefined): RunningScan {
          const s = { engine, owner };
          enginesSeen.add(engine);
          sessions.add(s);
          return s;
        },
        close: (s: RunningScan) => void sessions.delete(s),
      },
      pageDuration: histogram({ name: 'pactum_scan_page_check_duration_seconds', help: 'Time one page’s check took, by engine.', labelNames: ['engine'] as const, buckets: PAGE_BUCKETS, registers: r }),
      phaseDuration: histogram({ name: 'pactum_scan_phase_seconds', help: 'Time one page spent in each phase of its check (slot, open, load, axe, survey, check:<name>, settle, quiet, screenshots, styles, store), by engine and phase; settle is part of the checks that wait.', labelNames: ['engine', 'phase'] as const, buckets: PHASE_BUCKETS, registers: r }),
      pages: counter({ name: 'pactum_scan_pages_total', help: 'Pages checked, by engine and outcome (checked, failed).', labelNames: ['engine', 'outcome'] as const, registers: r }),
      notEvaluated: counter({ name: 'pactum_scan_checks_not_evaluated_total', help: 'Checks a page’s check could not decide (reported as not evaluated), by engine.', labelNames: ['engine'] as const, registers: r }),
      browserRestarts: counter({
        name: 'pactum_scan_browser_restarts_total', help: 'Times the Chromium browser was started again after its first start (it died, or was closed when idle).', registers: r,
        collect() {
          const launches = metrics.scans.browserLaunches?.() ?? 0;
          this.reset();
          if (launches > 1) this.inc(launches - 1);
        },
      }),
      /** Set once the Chromium engine exists: how often it has started a browser. */
      browserLaunches: null as null | (() => number),
    },
    /** Called once the services exist: gauges read from them when scraped. */
    /** Gives the gauges what they read (GaugeSources); called once, by the composition. */
    observe(given: GaugeSources) {
      Object.assign(sources, given);
      const freeBytes = given.freeBytes;
      // Only where the store can tell (STORAGE=fs): a 0 standing in for "unknown" would read as a full disk.
      if (freeBytes) {
        gauge({
          name: 'pactum_storage_free_bytes', help: 'Free space on the file system objects are stored in (STORAGE=fs only).', registers: r,
          async collect() {
            const free = await freeBytes().catch(() => null);
            if (free !== null) this.set(free);
          },
        });
      }
      gauge({
        name: 'pactum_db_pool_connections', help: 'Database connections of the pool, by state (used, free, pending: requests waiting for one).', labelNames: ['state'] as const, registers: r,
        collect() {
          const pool = sources.dbPool?.() ?? { used: 0, free: 0, pending: 0 };
          this.set({ state: 'used' }, pool.used);
          this.set({ state: 'free' }, pool.free);
          this.set({ state: 'pending' }, pool.pending);
        },
      });
      gauge({
        name: 'pactum_audit_rows_pending', help: 'Audit rows waiting to be written.', registers: r,
        collect() {
          this.set(sources.auditPending?.() ?? 0);
        },
      });
      gauge({
        name: 'pactum_object_tus_partial_bytes', help: 'Bytes declared by unfinished resumable (tus) uploads that have not expired (all instances).', registers: r,
        async collect() {
          const bytes = await sources.partialBytes?.().catch(() => null);
          if (bytes !== null && bytes !== undefined) this.set(bytes);
        },
      });
      gauge({
        name: 'pactum_scans_queued', help: 'Scans waiting to run (all instances), by org class (at_cap: the org has SCAN_MAX_RUNNING_PER_ORG scans running; below_cap: any other org).', labelNames: ['org_class'] as const, registers: r,
        async collect() {
          const load = await loadOrNull(sources.scanLoad);
          if (!load) return;
          const queued = { at_cap: 0, below_cap: 0 };
          const max = sources.scanLoad!.maxRunningPerOrg;
          for (const o of load) queued[orgClass(o.running, max)] += o.queued;
          for (const c of ORG_CLASSES) this.set({ org_class: c }, queued[c]);
        },
      });
    },
  };
  gauge({
    name: 'pactum_worker_pool_tasks', help: 'Tasks of the worker-thread pools, by pool (compute, page-check) and state (running, queued).', labelNames: ['pool', 'state'] as const, registers: r,
    collect() {
      this.reset();
      for (const [name, pools] of sources.workerPools?.() ?? []) {
        let running = 0;
        let queued = 0;
        for (const p of pools) {
          queued += p.queued;
          running += p.pending - p.queued;
        }
        this.set({ pool: name, state: 'running' }, running);
        this.set({ pool: name, state: 'queued' }, queued);
      }
    },
  });
  return metrics;
}

/** A histogram as the code records into it: observe a value, or time something. */
export interface Binned<L extends string> {
  observe(labels: LabelValues<L>, value: number): void;
  startTimer(labels: LabelValues<L>): () => number;
  get(): Promise<{ name: string; help: string; type: MetricType; values: BinnedValue[]; aggregator: 'sum' }>;
  reset(): void;
}

/** One line of a histogram's exposition: a bucket, the sum or the count of one series. */
interface BinnedValue {
  metricName: string;
  labels: Partial<Record<string, string | number>>;
  value: number;
}

/**
 * A histogram kept in plain JS and formatted by prom-client's registry when scraped. prom-client's
 * own Histogram validates the labels, hashes them and looks up its bucket object at every observe,
 * which on the cheapest MCP call was a measurable part of what metrics cost; here an observation
 * is a Map lookup per label (Series), a scan of the bounds and three additions. The registry
 * accepts any object with a name, type and get() (prom-client's Metric), and prints it exactly as
 * it prints its own histograms.
 */
function binned<L extends string>(c: HistogramConfiguration<L> & { buckets: number[] }): Binned<L> {
  const bounds = [...c.buckets].sort((a, b) => a - b);
  const series = new Series<L, { labels: LabelValues<L>; counts: Float64Array; sum: number; count: number }>(c.labelNames ?? [], (labels) => ({ labels, counts: new Float64Array(bounds.length), sum: 0, count: 0 }));
  const observe = (labels: LabelValues<L>, value: number) => {
    if (!Number.isFinite(value)) return;
    const s = series.at(labels);
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    if (i < bounds.length) s.counts[i]!++;
    s.sum += value;
    s.count++;
  };
  const metric = {
    name: c.name,
    help: c.help,
    type: 'histogram' as unknown as MetricType,
    aggregator: 'sum' as const,
    observe,
    startTimer(labels: LabelValues<L>) {
      const started = performance.now();
      return () => {
        const seconds = (performance.now() - started) / 1000;
        observe(labels, seconds);
        return seconds;
      };
    },
    reset: () => series.clear(),
    get() {
      const values: BinnedValue[] = [];
      for (const s of series.all) {
        let below = 0;
        bounds.forEach((le, i) => {
          below += s.counts[i]!;
          values.push({ metricName: `${c.name}_bucket`, labels: { ...s.labels, le }, value: below });
        });
        values.push({ metricName: `${c.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count });
        values.push({ metricName: `${c.name}_sum`, labels: s.labels, value: s.sum });
        values.push({ metricName: `${c.name}_count`, labels: s.labels, value: s.count });
      }
      return Promise.resolve({ name: c.name, help: c.help, type: metric.type, values, aggregator: metric.aggregator });
    },
  };
  for (const registry of c.registers ?? []) registry.registerMetric(metric as unknown as Metric);
  return metric;
}

/** The queue's load, or null when the database does not answer: the scrape still serves the rest. */
async function loadOrNull(source: GaugeSources['scanLoad']): Promise<OrgScanLoad[] | null> {
  return source ? source.load().catch(() => null) : null;
}

export type Metrics = ReturnType<typeof createMetrics>;
