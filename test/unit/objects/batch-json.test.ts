/**
 * The batch answer is written from templates (objects/batch.ts, objects/links.ts): each must be
 * exactly what JSON.stringify writes for the same action.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../../src/ground/config.js';
import type { RepoRow } from '../../../src/db/repos.js';
import { actionFactory } from '../../../src/objects/links.js';
import { createTransferTokens } from '../../../src/objects/transfer-tokens.js';

const tokens = createTransferTokens({ dataDir: '/nonexistent', lfs: { transferTokenSecret: randomBytes(32).toString('hex') } } as unknown as Config);
const repo = { id: 'rep_1', org_id: 'org_1', org_slug: 'acme', name: 'site "quoted" \\ ü' } as RepoRow;
const oid = createHash('sha256').update('x').digest('hex');

describe('action templates', () => {
  for (const publicUrl of ['http://127.0.0.1:8080', 'https://lfs.example/pre"fix\\']) {
    it(`write what JSON.stringify writes (public URL ${publicUrl})`, () => {
      const f = actionFactory({ publicUrl, ttlSeconds: 3600, tokens, repo, identity: null });
      for (const op of ['upload', 'download'] as const) {
        const authorization = f.authorization(oid, 42, op);
        for (const path of [`/content/${oid}`, `/tus/${oid}`, '/verify']) {
          const text = f.actionJson(path, authorization);
          expect(text).toBe(JSON.stringify(f.action(path, { Authorization: authorization })));
          expect(JSON.parse(text)).toEqual(f.action(path, f.header(oid, 42, op)));
        }
      }
      const presigned = 'https://bucket.example/o?X-Amz-Signature=a"b\\c&x=ü';
      expect(f.directJson(presigned)).toBe(JSON.stringify(f.direct(presigned)));
    });
  }
});
