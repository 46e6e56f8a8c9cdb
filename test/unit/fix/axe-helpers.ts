/** Runs axe-core inside jsdom, to prove a fix removes a violation and adds none. */
import axe from 'axe-core';
import { JSDOM, VirtualConsole } from 'jsdom';
import { expect } from 'vitest';
import { draftFix, type FixInput, type FixResult } from '../../../src/domain/fix/index.js';

const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/** A minimal valid page around a fragment, so only the fragment's own problems show. */
export function inPage(fragment: string): string {
  return `<!DOCTYPE html><html lang="en"><head><title>t</title></head><body><main>${fragment}</main></body></html>`;
}

/** Rule ids of the axe violations in a page. */
export async function violations(html: string): Promise<string[]> {
  // A silent console: jsdom reports the layout features it lacks, which is expected here.
  const dom = new JSDOM(html, { runScripts: 'outside-only', virtualConsole: new VirtualConsole() });
  try {
    dom.window.eval(axe.source);
    const axeInWindow = (dom.window as unknown as { axe: typeof axe }).axe;
    const result = await axeInWindow.run(dom.window.document, { runOnly: { type: 'tag', values: TAGS } });
    return result.violations.map((v) => v.id).sort();
  } finally {
    dom.window.close();
  }
}

export function draft(criterionId: string, htmlContext: string, more: Partial<FixInput> = {}): FixResult {
  return draftFix({ criterionId, issueMessage: '', htmlContext, platform: 'html', ...more });
}

/**
 * The rule fires on the original page and not on the fixed one, and the fixed page has no rule
 * failing that did not fail before. `wrap` puts fragments into a page; documents pass through.
 */
export async function expectAxeFixes(
  original: string,
  fixed: string,
  rules: readonly string[],
  wrap: (html: string) => string = inPage,
): Promise<void> {
  const before = await violations(wrap(original));
  const after = await violations(wrap(fixed));
  for (const rule of rules) {
    expect(before, `${rule} should fail before the fix`).toContain(rule);
    expect(after, `${rule} should pass after the fix`).not.toContain(rule);
  }
  expect(after.filter((r) => !before.includes(r)), 'violations introduced by the fix').toEqual([]);
}

/** Parses fixed markup for structural assertions. */
export function parse(html: string): Document {
  return new JSDOM(html).window.document;
}

export function sentences(text: string): number {
  return text.split(/(?<=[.!?])\s+(?=[A-Z"<])/).filter((s) => s.trim() !== '').length;
}
