/**
 * What the code hosts accept, as their own documents state it, written as checks that return
 * each problem found (an empty list: accepted).
 *
 * GitHub: "SARIF support for code scanning" (docs.github.com, code-security/reference/code-scanning/
 * sarif-files): the properties it marks required, with explicit non-empty values; the upload
 * limits it refuses a file over (runs, results, rules, tool extensions, locations, tags, the
 * gzip-compressed size); its lengths; the values it reads (levels, precision, problem.severity);
 * relative artifact URIs, since an absolute one with a scheme other than the checkout's is refused;
 * partialFingerprints.primaryLocationLineHash, the fingerprint it uses; runAutomationDetails.id as
 * category/run-id.
 *
 * GitLab: the merge-request accessibility report (artifacts:reports:accessibility) is pa11y-ci's
 * JSON. GitLab's parser (Gitlab::Ci::Parsers::Accessibility::Pa11y) reads `results`, each URL
 * (non-empty) to its array of errors; its report counts `total` URLs, `passes` URLs without an
 * entry and `errors` entries; each entry is served as GitLab's accessibility_error entity (code,
 * type, type_code, message, context, selector, runner, runner_extras, nothing else).
 */
import { gzipSync } from 'node:zlib';
import Ajv2020 from 'ajv/dist/2020.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the documents are read as the hosts read them: untyped JSON */
type Json = any;

const LEVELS = ['none', 'note', 'warning', 'error'];
const RULE_LEVELS = ['note', 'warning', 'error'];
const PRECISIONS = ['very-high', 'high', 'medium', 'low'];
const PROBLEM_SEVERITIES = ['error', 'warning', 'recommendation'];
/** Semantic Versioning 2.0.0's own regular expression (semver.org). */
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** The limits of GitHub's table "SARIF data / Maximum values": more refuses the whole file. */
export const GITHUB_LIMITS = { runs: 20, resultsPerRun: 25_000, rulesPerRun: 25_000, extensionsPerRun: 100, locationsPerResult: 1_000, tagsPerRule: 20, gzipBytes: 10 * 1024 * 1024 };

/** Each constraint of GitHub's page this checks, for a test to name what it held. */
export const GITHUB_CONSTRAINTS = [
  'sarifLog: $schema, version 2.1.0 and runs[] present and non-empty',
  'at most 20 runs a file, 25,000 results, 25,000 rules and 100 tool extensions a run',
  'the file gzip-compressed at most 10 MB',
  'run: tool.driver and results[] present',
  'toolComponent: name present; version and semanticVersion present, semanticVersion Semantic Versioning 2.0; informationUri an absolute URL; rules[] present',
  'reportingDescriptor: id present; name at most 255 characters; shortDescription.text and fullDescription.text present and at most 1024 characters; help.text present',
  'reportingDescriptor: defaultConfiguration.level note, warning or error; at most 20 tags; precision very-high, high, medium or low; problem.severity error, warning or recommendation; no security-severity on rules that are not security rules',
  'result: ruleId and ruleIndex name the same rule; level a SARIF level; message.text present',
  'result: 1 to 10 locations (GitHub reads the first), each with physicalLocation.artifactLocation.uri and region startLine, startColumn, endLine, endColumn',
  'result: partialFingerprints.primaryLocationLineHash present (the one GitHub reads)',
  'every artifact location (results and notifications) a relative URI: no scheme, no leading slash',
  'runAutomationDetails.id as category/run-id, with a category',
  'no required property an empty string',
] as const;

const nonEmpty = (v: unknown) => typeof v === 'string' && v.trim() !== '';
const positiveInt = (v: unknown) => Number.isInteger(v) && (v as number) >= 1;

/** Every artifactLocation in the log, wherever it sits, with its path for the message. */
function artifactLocations(node: Json, path: string, out: { path: string; uri: unknown }[]) {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) return node.forEach((n, i) => artifactLocations(n, `${path}[${i}]`, out));
  for (const [k, v] of Object.entries(node)) {
    if (k === 'artifactLocation' && v && typeof v === 'object') out.push({ path: `${path}.${k}`, uri: (v as { uri?: unknown }).uri });
    artifactLocations(v, `${path}.${k}`, out);
  }
}

/** What GitHub code scanning would refuse, or read wrongly, in `text` (a SARIF file). */
export function githubSarifProblems(text: string): string[] {
  const p: string[] = [];
  const gz = gzipSync(text).length;
  if (gz > GITHUB_LIMITS.gzipBytes) p.push(`gzip-compressed ${gz} bytes, over 10 MB`);
  const log = JSON.parse(text);
  if (!nonEmpty(log.$schema)) p.push('$schema missing');
  if (log.version !== '2.1.0') p.push(`version ${log.version}, not 2.1.0`);
  if (!Array.isArray(log.runs) || log.runs.length === 0) return [...p, 'runs[] missing or empty'];
  if (log.runs.length > GITHUB_LIMITS.runs) p.push(`${log.runs.length} runs`);
  log.runs.forEach((run: Json, r: number) => {
    const at = `runs[${r}]`;
    const driver = run.tool?.driver;
    if (!driver) return void p.push(`${at}.tool.driver missing`);
    if (!nonEmpty(driver.name)) p.push(`${at} driver.name missing`);
    if (!nonEmpty(driver.version)) p.push(`${at} driver.version missing`);
    if (!SEMVER.test(String(driver.semanticVersion))) p.push(`${at} driver.semanticVersion ${driver.semanticVersion} is not Semantic Versioning 2.0`);
    try {
      if (!/^https?:$/.test(new URL(String(driver.informationUri)).protocol)) p.push(`${at} driver.informationUri is not an http(s) URL`);
    } catch {
      p.push(`${at} driver.informationUri ${driver.informationUri} is not an absolute URL`);
    }
    if (!Array.isArray(driver.rules)) p.push(`${at} driver.rules[] missing`);
    if ((run.tool.extensions ?? []).length > GITHUB_LIMITS.extensionsPerRun) p.push(`${at} more than 100 tool extensions`);
    const rules: Json[] = driver.rules ?? [];
    if (rules.length > GITHUB_LIMITS.rulesPerRun) p.push(`${at} ${rules.length} rules`);
    rules.forEach((rule, i) => {
      const ra = `${at} rule ${i} (${rule.id})`;
      if (!nonEmpty(rule.id)) p.push(`${ra}: id missing`);
      if (rule.name !== undefined && (!nonEmpty(rule.name) || rule.name.length > 255)) p.push(`${ra}: name empty or over 255 characters`);
      for (const d of ['shortDescription', 'fullDescription']) {
        if (!nonEmpty(rule[d]?.text)) p.push(`${ra}: ${d}.text missing`);
        else if (rule[d].text.length > 1024) p.push(`${ra}: ${d}.text over 1024 characters`);
      }
      if (!nonEmpty(rule.help?.text)) p.push(`${ra}: help.text missing`);
      const level = rule.defaultConfiguration?.level;
      if (level !== undefined && !RULE_LEVELS.includes(level)) p.push(`${ra}: defaultConfiguration.level ${level}`);
      const props = rule.properties ?? {};
      if (props.tags !== undefined && (!Array.isArray(props.tags) || props.tags.length > GITHUB_LIMITS.tagsPerRule || !props.tags.every(nonEmpty))) p.push(`${ra}: tags not at most 20 strings`);
      if (props.precision !== undefined && !PRECISIONS.includes(props.precision)) p.push(`${ra}: precision ${props.precision}`);
      if (props['problem.severity'] !== undefined && !PROBLEM_SEVERITIES.includes(props['problem.severity'])) p.push(`${ra}: problem.severity ${props['problem.severity']}`);
      if (props['security-severity'] !== undefined && !(props.tags ?? []).includes('security')) p.push(`${ra}: security-severity on a rule not tagged security`);
    });
    if (!Array.isArray(run.results)) return void p.push(`${at}.results[] missing`);
    if (run.results.length > GITHUB_LIMITS.resultsPerRun) p.push(`${at} ${run.results.length} results, over 25,000`);
    run.results.forEach((res: Json, i: number) => {
      const ra = `${at}.results[${i}]`;
      const byIndex = res.ruleIndex === undefined ? undefined : rules[res.ruleIndex];
      if (res.ruleIndex !== undefined && (!byIndex || (res.ruleId !== undefined && byIndex.id !== res.ruleId))) p.push(`${ra}: ruleIndex ${res.ruleIndex} does not name rule ${res.ruleId}`);
      if (res.ruleId !== undefined && !rules.some((rule) => rule.id === res.ruleId)) p.push(`${ra}: ruleId ${res.ruleId} is no rule of the driver`);
      if (res.level !== undefined && !LEVELS.includes(res.level)) p.push(`${ra}: level ${res.level}`);
      if (!nonEmpty(res.message?.text)) p.push(`${ra}: message.text missing`);
      const locations: Json[] = res.locations ?? [];
      if (locations.length < 1 || locations.length > 10) p.push(`${ra}: ${locations.length} locations (1 to 10)`);
      if (locations.length > GITHUB_LIMITS.locationsPerResult) p.push(`${ra}: over 1,000 locations`);
      locations.forEach((l, j) => {
        const pl = l.physicalLocation;
        if (!pl) return void p.push(`${ra}.locations[${j}]: physicalLocation missing`);
        if (!nonEmpty(pl.artifactLocation?.uri)) p.push(`${ra}.locations[${j}]: artifactLocation.uri missing`);
        for (const k of ['startLine', 'startColumn', 'endLine', 'endColumn']) if (!positiveInt(pl.region?.[k])) p.push(`${ra}.locations[${j}]: region.${k} missing`);
      });
      if (!nonEmpty(res.partialFingerprints?.primaryLocationLineHash)) p.push(`${ra}: partialFingerprints.primaryLocationLineHash missing`);
    });
    const all: { path: string; uri: unknown }[] = [];
    artifactLocations(run, at, all);
    for (const { path, uri } of all) {
      if (typeof uri !== 'string') continue;
      if (SCHEME.test(uri)) p.push(`${path}.uri ${uri} has a scheme (GitHub refuses the upload unless it is the checkout's)`);
      else if (uri.startsWith('/')) p.push(`${path}.uri ${uri} is not relative to the repository`);
    }
    const id = run.automationDetails?.id;
    if (id !== undefined && (!nonEmpty(id) || !String(id).includes('/') || String(id).startsWith('/'))) p.push(`${at} automationDetails.id ${id} has no category (category/run-id)`);
  });
  return p;
}

/** pa11y-ci's JSON report as GitLab reads it (the reporter's shape; GitLab's entity per entry). */
const PA11Y_CI_SCHEMA = {
  type: 'object',
  required: ['total', 'passes', 'errors', 'results'],
  properties: {
    total: { type: 'integer', minimum: 0 },
    passes: { type: 'integer', minimum: 0 },
    errors: { type: 'integer', minimum: 0 },
    results: {
      type: 'object',
      propertyNames: { minLength: 1 },
      additionalProperties: {
        type: 'array',
        items: {
          type: 'object',
          required: ['code', 'type', 'typeCode', 'message', 'context', 'selector', 'runner', 'runnerExtras'],
          properties: {
            code: { type: 'string', minLength: 1 },
            type: { enum: ['error', 'warning', 'notice'] },
            typeCode: { enum: [1, 2, 3] },
            message: { type: 'string', minLength: 1 },
            context: { type: 'string' },
            selector: { type: 'string' },
            runner: { type: 'string', minLength: 1 },
            runnerExtras: { type: ['object', 'null'] },
          },
        },
      },
    },
  },
} as const;

/** GitLab's own schema of an entry as its API serves it (spec/fixtures/api/schemas/entities/accessibility_error.json). */
const GITLAB_ACCESSIBILITY_ERROR = {
  type: 'object',
  required: ['code', 'type', 'type_code', 'message', 'context', 'selector', 'runner', 'runner_extras'],
  properties: {
    code: { type: 'string' }, type: { type: 'string' }, type_code: { type: 'integer' }, message: { type: 'string' },
    context: { type: 'string' }, selector: { type: 'string' }, runner: { type: 'string' }, runner_extras: { type: ['object', 'null'] },
  },
  additionalProperties: false,
} as const;

const snake = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));

/** What GitLab's accessibility report would refuse or count wrongly in `text`. */
export function gitlabAccessibilityProblems(text: string): string[] {
  const p: string[] = [];
  const report = JSON.parse(text);
  const ajv = new Ajv2020.default({ allErrors: true, strict: false });
  const shape = ajv.compile(PA11Y_CI_SCHEMA);
  if (!shape(report)) return (shape.errors ?? []).slice(0, 10).map((e) => `${e.instancePath || '/'} ${e.message}`);
  const entity = ajv.compile(GITLAB_ACCESSIBILITY_ERROR);
  const urls = Object.entries(report.results as Record<string, Json[]>);
  for (const [url, entries] of urls) {
    entries.forEach((e, i) => {
      if (!entity(snake(e))) p.push(`results[${url}][${i}] as GitLab serves it: ${entity.errors?.map((x) => `${x.instancePath} ${x.message}`).join('; ')}`);
    });
  }
  // What GitLab's AccessibilityReports counts from `results`, against what the file says.
  const errors = urls.reduce((n, [, e]) => n + e.length, 0);
  const passes = urls.filter(([, e]) => e.length === 0).length;
  if (report.total !== urls.length) p.push(`total ${report.total}, but ${urls.length} URLs`);
  if (report.passes !== passes) p.push(`passes ${report.passes}, but ${passes} URLs without an entry`);
  if (report.errors !== errors) p.push(`errors ${report.errors}, but ${errors} entries`);
  return p;
}
