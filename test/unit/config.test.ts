import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

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

  it('reads booleans and lists', () => {
    const c = loadConfig({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', ALLOWED_ORIGINS: 'https://a.example, https://b.example' });
    expect(c.scanAllowPrivateNetworks).toBe(true);
    expect(c.allowedOrigins).toEqual(['https://a.example', 'https://b.example']);
  });
});
