/**
 * The effective settings, for the line the server logs when it starts serving: every value it
 * runs with, defaults included, with secrets replaced by whether they are set.
 */
import type { Config } from '../ground/config.js';
import { redactUrlCredentials } from '../ground/redact.js';

const SECRET = /secret|token|password|key$/i;

function redact(value: unknown, key: string): unknown {
  if (SECRET.test(key) && value !== null && value !== undefined && typeof value !== 'object') return '[set]';
  if (typeof value === 'string') return redactUrlCredentials(value);
  if (Array.isArray(value)) return value.map((v) => redact(v, ''));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, k)]));
  return value;
}

export function effectiveSettings(config: Config): Record<string, unknown> {
  return redact(config, '') as Record<string, unknown>;
}
