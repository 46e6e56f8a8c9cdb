import { describe, expect, it } from 'vitest';
import { lockPathKey, normaliseLockPath } from '../../src/db/lock-path-key.js';

describe('lock path normalisation', () => {
  it('gives every spelling of a file one path, and so one key', () => {
    for (const spelling of ['a/b', './a/b', 'a//b', 'a/b/', 'a/./b', './/a/.//b//', 'a/b/.']) {
      const n = normaliseLockPath(spelling);
      expect(n, spelling).toEqual({ ok: true, path: 'a/b' });
      if (n.ok) expect(lockPathKey(n.path)).toBe(lockPathKey('a/b'));
    }
  });

  it('keeps what git-lfs sends as it is: repository-relative, /-separated, already clean', () => {
    for (const p of ['logo.psd', 'art/2026/logo v2.psd', 'a\\b', '.hidden/x', 'a/..b', 'a/b..', '...']) expect(normaliseLockPath(p), p).toEqual({ ok: true, path: p });
  });

  it('refuses .. segments, absolute paths and paths that name no file, saying which', () => {
    for (const p of ['..', '../a', 'a/..', 'a/../b', './a/../../b']) expect(normaliseLockPath(p), p).toMatchObject({ ok: false, reason: expect.stringContaining("'..'") });
    for (const p of ['/a', '/', '//a/b']) expect(normaliseLockPath(p), p).toMatchObject({ ok: false, reason: expect.stringContaining('absolute') });
    for (const p of ['.', './', './/.']) expect(normaliseLockPath(p), p).toMatchObject({ ok: false, reason: expect.stringContaining('names no file') });
  });
});
