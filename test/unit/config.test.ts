import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/ground/config.js';
import { temporaryFileIdleMs } from '../../src/objects/store/open.js';
import { defaultMaxConnections } from '../../src/ground/descriptor-limit.js';
import { availableParallelism } from 'node:os';

describe('configuration', () => {
  it('has working defaults for a fresh machine', () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.host).toBe('127.0.0.1');
    expect(c.publicUrl).toBe('http://127.0.0.1:8080');
    expect(c.jwt.audience).toBe('http://127.0.0.1:8080/api/v1/mcp');
    expect(c.dataDir).toMatch(/\/data$/);
    expect(c.allowedHosts).toContain('localhost:8080');
    expect(c.allowedOrigins).toEqual(['http://127.0.0.1:8080']);
    expect(c.scanAllowPrivateNetworks).toBe(false);
  });

  it('derives the public URL, audience and allowed host from PUBLIC_URL', () => {
    const c = loadConfig({ PUBLIC_URL: 'https://lfs.example.com/', PORT: '9000' });
    expect(c.publicUrl).toBe('https://lfs.example.com');
    expect(c.jwt.audience).toBe('https://lfs.example.com/api/v1/mcp');
    expect(c.allowedHosts).toContain('lfs.example.com');
  });

  it('names every bad setting in one clear error', () => {
    let err: unknown;
    try {
      loadConfig({ PORT: 'eighty', PUBLIC_URL: 'not a url', JWT_SECRET: 'short', SCAN_ALLOW_PRIVATE_NETWORKS: 'maybe' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    for (const name of ['PORT', 'PUBLIC_URL', 'JWT_SECRET', 'SCAN_ALLOW_PRIVATE_NETWORKS']) expect(message).toContain(name);
    expect(message).not.toContain('short'); // a rejected secret is not echoed
  });

  it('caps batch requests by object count and body size, far above what git-lfs sends, and names a bad cap', () => {
    const d = loadConfig({});
    expect(d.lfs.maxBatchObjects).toBeGreaterThanOrEqual(10 * 100); // git-lfs batches 100 objects at most
    expect(d.lfs.maxBatchBytes).toBeGreaterThanOrEqual(d.lfs.maxBatchObjects * 200); // about 90 bytes an object
    const c = loadConfig({ LFS_MAX_BATCH_OBJECTS: '5000', LFS_MAX_BATCH_BYTES: '2097152' });
    expect(c.lfs.maxBatchObjects).toBe(5000);
    expect(c.lfs.maxBatchBytes).toBe(2097152);
    for (const [name, value] of [['LFS_MAX_BATCH_OBJECTS', '0'], ['LFS_MAX_BATCH_OBJECTS', 'many'], ['LFS_MAX_BATCH_BYTES', '100'], ['LFS_MAX_BATCH_BYTES', '1.5']]) {
      expect(() => loadConfig({ [name!]: value! }), `${name}=${value}`).toThrow(new RegExp(name!));
    }
  });

  it('reads booleans and lists', () => {
    const c = loadConfig({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', ALLOWED_ORIGINS: 'https://a.example, https://b.example' });
    expect(c.scanAllowPrivateNetworks).toBe(true);
    expect(c.allowedOrigins).toEqual(['https://a.example', 'https://b.example']);
  });

  it('opens private addresses to service calls only when OUTBOUND_ALLOW_PRIVATE_NETWORKS says so', () => {
    expect(loadConfig({}).outboundAllowPrivateNetworks).toBe(false);
    expect(loadConfig({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' }).outboundAllowPrivateNetworks).toBe(true);
    expect(() => loadConfig({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'maybe' })).toThrow(/OUTBOUND_ALLOW_PRIVATE_NETWORKS/);
  });

  it('selects S3 storage and checks the settings that only make sense together', () => {
    const c = loadConfig({ STORAGE: 's3', S3_BUCKET: 'lfs-objects', S3_ENDPOINT: 'http://minio:9000', S3_FORCE_PATH_STYLE: 'true', S3_PREFIX: 'prod/' });
    expect(c.storage).toMatchObject({ kind: 's3', bucket: 'lfs-objects', endpoint: 'http://minio:9000', forcePathStyle: true, prefix: 'prod/', region: 'us-east-1', partSize: 16 * 1024 * 1024 });
    expect(loadConfig({}).storage).toEqual({ kind: 'fs' });
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return '';
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
    };
    expect(problems({ STORAGE: 's3' })).toMatch(/S3_BUCKET: required when STORAGE=s3/);
    expect(problems({ STORAGE: 'gcs' })).toMatch(/STORAGE/);
    expect(problems({ STORAGE: 's3', S3_BUCKET: 'bkt', S3_ACCESS_KEY_ID: 'id-only' })).toMatch(/set both or neither/);
    expect(problems({ STORAGE: 's3', S3_BUCKET: 'bkt', S3_PREFIX: '../up' })).toMatch(/S3_PREFIX/);
    expect(problems({ S3_PART_SIZE_MB: '1' })).toMatch(/S3_PART_SIZE_MB/);
    expect(problems({ DATABASE_URL: 'mysql://db/x' })).toMatch(/DATABASE_URL: must be a postgres:\/\/ URL/);
    expect(problems({ SCAN_TIMEOUT_SECONDS: '1' })).toMatch(/SCAN_TIMEOUT_SECONDS/);
    expect(problems({ LFS_UPLOAD_LEASE_SECONDS: '0' })).toMatch(/LFS_UPLOAD_LEASE_SECONDS/);
    const secret = problems({ STORAGE: 's3', S3_BUCKET: 'bkt', S3_SECRET_ACCESS_KEY: 'very-secret-value' });
    expect(secret).toMatch(/set both or neither/);
    expect(secret).not.toContain('very-secret-value');
  });

  it('bounds slow clients and password guessing, with defaults git-lfs uploads survive, and names a bad value', () => {
    const d = loadConfig({});
    expect(d.http).toMatchObject({ headersTimeoutMs: 30_000, idleTimeoutMs: 120_000, minBodyRate: 1024, bodyRateWindowMs: 30_000 });
    expect(d.authThrottle).toEqual({ backoffAfter: 5, addressBackoffAfter: 30, userSlowAfter: 100 });
    const c = loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_MIN_BODY_RATE: '0', AUTH_BACKOFF_AFTER: '3' });
    expect(c.http.headersTimeoutMs).toBe(1000);
    expect(c.http.minBodyRate).toBe(0);
    expect(c.authThrottle.backoffAfter).toBe(3);
    for (const [name, value] of [['HTTP_HEADERS_TIMEOUT_MS', '10'], ['HTTP_IDLE_TIMEOUT_MS', 'soon'], ['HTTP_MIN_BODY_RATE', '-1'], ['HTTP_BODY_RATE_WINDOW_MS', '0'], ['AUTH_BACKOFF_AFTER', '0'], ['AUTH_ADDRESS_BACKOFF_AFTER', 'x'], ['AUTH_USER_SLOW_AFTER', '1.5']] as const) {
      expect(() => loadConfig({ [name]: value }), name).toThrow(new RegExp(name));
    }
  });

  it('caps connections, hurries anonymous headers and bounds password checks, and names a bad value', () => {
    const d = loadConfig({});
    expect(d.http).toMatchObject({ anonHeadersTimeoutMs: 10_000, maxConnectionsPerAddress: 256 });
    expect(d.http.maxConnections).toBe(defaultMaxConnections());
    expect(d.passwordChecks).toEqual({ atOnce: Math.max(1, Math.min(2, availableParallelism() - 1)), queue: 64 });
    // Never longer than the headers timeout every connection has.
    expect(loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000' }).http.anonHeadersTimeoutMs).toBe(5000);
    const c = loadConfig({ HTTP_MAX_CONNECTIONS: '500', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '8', AUTH_PASSWORD_CHECKS: '3', AUTH_PASSWORD_QUEUE: '0' });
    expect(c.http).toMatchObject({ maxConnections: 500, maxConnectionsPerAddress: 8 });
    expect(c.passwordChecks).toEqual({ atOnce: 3, queue: 0 });
    for (const [name, value] of [['HTTP_ANON_HEADERS_TIMEOUT_MS', '10'], ['HTTP_MAX_CONNECTIONS', '0'], ['HTTP_MAX_CONNECTIONS_PER_ADDRESS', 'many'], ['AUTH_PASSWORD_CHECKS', '0'], ['AUTH_PASSWORD_QUEUE', '-1']] as const) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(new RegExp(name));
    }
  });

  it('expires abandoned resumable uploads after a day by default, sweeps every ten minutes, and names a bad value', () => {
    const d = loadConfig({});
    expect(d.lfs.partialTtlSeconds).toBe(86_400);
    expect(d.lfs.sweepIntervalSeconds).toBe(600);
    expect(temporaryFileIdleMs(d.http)).toBe(240_000);
    expect(loadConfig({ TUS_PARTIAL_TTL_SECONDS: '3600' }).lfs.partialTtlSeconds).toBe(3600);
    for (const [name, value] of [['TUS_PARTIAL_TTL_SECONDS', '0'], ['TUS_PARTIAL_TTL_SECONDS', '1d'], ['STORAGE_SWEEP_INTERVAL_SECONDS', '-5'], ['STORAGE_SWEEP_INTERVAL_SECONDS', '100000']] as const) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(new RegExp(name));
    }
  });
});
