/** The catalogue of checks beyond axe: which a standard runs, and the orientation comparison. */
import { describe, expect, it } from 'vitest';
import { CHECKS, checksFor } from '../../../src/domain/scan/checks/catalogue.js';
import { orientationLocks } from '../../../src/domain/scan/chromium/browser-checks.js';

describe('checksFor', () => {
  it('runs level A checks at every standard, AA from WCAG2AA, AAA at WCAG2AAA only', () => {
    const ids = (standard: 'WCAG2A' | 'WCAG2AA' | 'WCAG2AAA') => checksFor(standard).map((c) => c.id);
    expect(ids('WCAG2A')).toContain('pactum-link-text');
    expect(ids('WCAG2A')).not.toContain('pactum-orientation');
    expect(ids('WCAG2AA')).toContain('pactum-orientation');
    expect(ids('WCAG2AA')).not.toContain('pactum-link-text-alone');
    expect(ids('WCAG2AAA')).toContain('pactum-link-text-alone');
    expect(ids('WCAG2AAA')).toHaveLength(Object.keys(CHECKS).length);
  });

  it('gives each half of 2.5.4 its own check and ACT rule', () => {
    expect(CHECKS['pactum-device-motion'].actRules).toEqual(['7677a9']);
    expect(CHECKS['pactum-motion-disable'].actRules).toEqual(['c249d5']);
  });
});

describe('orientationLocks', () => {
  const at = (degrees: number, selector = 'html') => ({ selector, html: `<${selector}>`, degrees });
  it('reports an element turned a quarter turn in one orientation only, the outermost once', () => {
    const [lock, ...rest] = orientationLocks([at(90), at(90, 'body')], [at(0), at(0, 'body')]);
    expect(rest).toEqual([]);
    expect(lock).toMatchObject({ check: 'pactum-orientation', criterion: '1.3.4', selector: 'html', evidence: 'turned 90° at a portrait viewport (320 × 640) and 0° at a landscape one (640 × 400)' });
    expect(lock!.what).toContain('keeps its content in landscape');
  });
  it('sees a quarter turn on top of a tilt, and either way round', () => {
    expect(orientationLocks([at(2.5, 'body')], [at(92.5, 'body')])).toHaveLength(1);
    expect(orientationLocks([at(0)], [at(270)])).toHaveLength(1);
  });
  it('leaves alone a full turn, a tilt kept in both orientations, and an element turned alike in both', () => {
    expect(orientationLocks([at(0)], [at(0)])).toEqual([]);
    expect(orientationLocks([at(2, 'body')], [at(2, 'body')])).toEqual([]);
    expect(orientationLocks([at(180)], [at(0)])).toEqual([]);
    expect(orientationLocks([at(90)], [at(90)])).toEqual([]);
    expect(orientationLocks([at(45)], [at(0)])).toEqual([]);
  });
});
