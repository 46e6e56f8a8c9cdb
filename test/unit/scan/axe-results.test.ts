/**
 * The corrections to axe-core's answer (AXE_CORRECTIONS): the meta refresh a browser acts on, as the
 * HTML standard parses its content, and video captions jsdom cannot judge. The corpus test holds
 * both engines to them on real pages; these pin the parsing and the selection.
 */
import type axe from 'axe-core';
import { JSDOM } from 'jsdom';
import { describe, expect, it } from 'vitest';
import { correctedAnswer, pageFactsOf, refreshOf } from '../../../src/domain/scan/axe-results.js';

const node = (html: string, target: string): axe.NodeResult => ({ html, target: [target], any: [], all: [], none: [], impact: 'critical' } as unknown as axe.NodeResult);
const rule = (id: string, nodes: axe.NodeResult[], tags = ['wcag2a', 'wcag221']): axe.Result => ({ id, tags, nodes, help: id, helpUrl: '', impact: 'critical', description: '' } as unknown as axe.Result);
const meta = (content: string) => `<meta http-equiv="refresh" content="${content}">`;

describe('refreshOf (the HTML standard\'s shared declarative refresh steps)', () => {
  it('reads the delay of content that parses', () => {
    expect(refreshOf('30')).toBe(30);
    expect(refreshOf('0; URL=\'https://w3.org\'')).toBe(0);
    expect(refreshOf('  72001, https://w3.org')).toBe(72001);
    expect(refreshOf('5.9 https://w3.org')).toBe(5);
    expect(refreshOf('.5; next.html')).toBe(0);
  });

  it('gives up where a browser ignores the element', () => {
    for (const content of ['', '0: https://w3.org', '-00.12 foo', '; 72001', '+72001; http://w3.org', 'foo; URL=\'https://w3.org\'']) {
      expect(refreshOf(content), content).toBeNull();
    }
  });
});

describe('correctedAnswer', () => {
  it('keeps only the finding on the first meta refresh whose content parses', () => {
    // The first (20 hours) passes and is the one acted on: axe's failure of the second goes.
    const first = { refreshContents: ['72001; url=next.html', '1000'] };
    const answer = { violations: [rule('meta-refresh', [node(meta('1000'), 'meta:nth-child(4)')])], incomplete: [] };
    expect(correctedAnswer(answer, first, 'browser').violations).toEqual([]);
    expect(answer.violations[0]!.nodes).toHaveLength(1);
    // The first does not parse: the second is acted on, and fails.
    const invalidFirst = { refreshContents: ['0: next.html', '1000'] };
    expect(correctedAnswer(answer, invalidFirst, 'jsdom').violations).toEqual(answer.violations);
    // Two that fail: only the first is reported.
    const both = { violations: [rule('meta-refresh-no-exceptions', [node(meta('30'), 'a'), node(meta('40'), 'b')])], incomplete: [] };
    expect(correctedAnswer(both, { refreshContents: ['30', '40'] }, 'browser').violations[0]!.nodes.map((n) => n.target)).toEqual([['a']]);
  });

  it('reads the content from the serialized element, entities and all', () => {
    const answer = { violations: [rule('meta-refresh', [node(meta('30; url=/a?x=1&amp;y=&quot;2&quot;'), 'meta')])], incomplete: [] };
    expect(correctedAnswer(answer, { refreshContents: ['30; url=/a?x=1&y="2"'] }, 'browser').violations).toHaveLength(1);
  });

  it('leaves other rules as axe answered them', () => {
    const answer = { violations: [rule('image-alt', [node('<img src="a.png">', 'img')])], incomplete: [rule('video-caption', [node('<video src="v.mp4">', 'video')], ['wcag2a', 'wcag122'])] };
    expect(correctedAnswer(answer, { refreshContents: [] }, 'browser')).toEqual({ ...answer, notEvaluated: [] });
  });

  it('reports video captions as not evaluated in jsdom, which has no playback', () => {
    const answer = { violations: [], incomplete: [rule('video-caption', [node('<video src="v.mp4">', 'video')], ['wcag2a', 'wcag122'])] };
    const corrected = correctedAnswer(answer, { refreshContents: [] }, 'jsdom');
    expect(corrected.incomplete).toEqual([]);
    expect(corrected.notEvaluated).toEqual([{ code: 'video-caption', wcagCriteria: ['1.2.2'], reason: 'needs a browser', detail: expect.stringContaining('media playback') }]);
  });
});

describe('pageFactsOf', () => {
  it('lists the content of every meta refresh in document order, whatever the case of http-equiv', () => {
    const { window } = new JSDOM('<head><meta http-equiv="Refresh" content="0: x"><meta http-equiv="refresh"><meta name="refresh" content="9"></head><body><meta http-equiv="REFRESH" content="30"></body>');
    expect(pageFactsOf(window.document)).toEqual({ refreshContents: ['0: x', '30'] });
  });
});
