/**
 * Links named alike (2.4.4, ACT fd3a94): which groups of the DOM survey a browser that follows
 * their targets clears (link-destinations.ts). The engine's part (opening the targets in Chromium)
 * runs in the corpus test (link-destination-pass.html and link-destination-fail.html).
 */
import { describe, expect, it } from 'vitest';
import { equivalentDestinations, equivalentLinks, instantRefresh, MAX_DESTINATIONS, MAX_GROUP_TARGETS, type Destination } from '../../../src/domain/scan/chromium/link-destinations.js';

const at = (url: string, text: string): Destination => ({ url, text });

describe('equivalentDestinations', () => {
  it('holds targets that end at one URL, or show the same main text, as one purpose', () => {
    expect(equivalentDestinations([at('https://e.com/a', 'Contact us'), at('https://e.com/a', 'Contact us')])).toBe(true);
    expect(equivalentDestinations([at('https://e.com/a', ''), at('https://e.com/a', '')])).toBe(true);
    expect(equivalentDestinations([at('https://e.com/about/contact', 'Contact us Phone: 1'), at('https://e.com/careers/contact', 'Contact us Phone: 1')])).toBe(true);
  });

  it('keeps targets that differ, show nothing, or could not be followed', () => {
    expect(equivalentDestinations([at('https://e.com/chat', 'Chat with us'), at('https://e.com/call', 'Call us')])).toBe(false);
    expect(equivalentDestinations([at('https://e.com/a', ''), at('https://e.com/b', '')])).toBe(false);
    expect(equivalentDestinations([at('https://e.com/a', 'Contact us'), null])).toBe(false);
    expect(equivalentDestinations([at('https://e.com/a', 'Contact us')])).toBe(false);
  });
});

describe('instantRefresh', () => {
  const base = 'https://e.com/dir/page.html';
  it('follows the first refresh that parses when its delay is 0, in each form the HTML standard reads', () => {
    expect(instantRefresh(["0; URL='index.html'"], base)).toBe('https://e.com/dir/index.html');
    expect(instantRefresh(['0;url=/home#top'], base)).toBe('https://e.com/home');
    expect(instantRefresh(['0, "other.html"'], base)).toBe('https://e.com/dir/other.html');
    expect(instantRefresh(['  0 ; URL = https://x.org/'], base)).toBe('https://x.org/');
    expect(instantRefresh(['0: broken', '0; url=second.html'], base)).toBe('https://e.com/dir/second.html');
  });

  it('does not follow a later refresh, a reload of the same page, or a URL that is not http(s)', () => {
    expect(instantRefresh(['30; URL=index.html'], base)).toBeNull();
    expect(instantRefresh(['5; URL=a.html', '0; URL=b.html'], base)).toBeNull();
    expect(instantRefresh(['0'], base)).toBeNull();
    expect(instantRefresh(['0; url=javascript:alert(1)'], base)).toBeNull();
    expect(instantRefresh([], base)).toBeNull();
  });
});

describe('equivalentLinks', () => {
  const page = 'https://e.com/contact.html';
  const site: Record<string, Destination | null> = {
    'https://e.com/about/contact': at('https://e.com/about/contact', 'Contact us Phone: 1'),
    'https://e.com/careers/contact': at('https://e.com/careers/contact', 'Contact us Phone: 1'),
    'https://e.com/moved': at('https://e.com/about/contact', 'Contact us Phone: 1'),
    'https://e.com/chat': at('https://e.com/chat', 'Chat with us'),
    'https://e.com/gone': null,
  };
  const opener = () => {
    const opened: string[] = [];
    return { opened, open: (url: string) => { opened.push(url); return Promise.resolve(site[url] ?? null); } };
  };

  it('clears the links of groups whose every target is settled, and opens each target once', async () => {
    const { opened, open } = opener();
    const cleared = await equivalentLinks([
      { selectors: ['#a1', '#a2'], targets: ['https://e.com/about/contact', 'https://e.com/careers/contact'] },
      { selectors: ['#b1', '#b2'], targets: ['https://e.com/moved', 'https://e.com/about/contact'] },
      { selectors: ['#c1', '#c2'], targets: ['https://e.com/chat', 'https://e.com/about/contact'] },
      { selectors: ['#d1', '#d2'], targets: ['https://e.com/gone', 'https://e.com/about/contact'] },
    ], page, open);
    expect([...cleared].sort()).toEqual(['#a1', '#a2', '#b1', '#b2']);
    expect(opened).toEqual(['https://e.com/about/contact', 'https://e.com/careers/contact', 'https://e.com/moved', 'https://e.com/chat', 'https://e.com/gone']);
  });

  it('opens nothing off the page\'s site, and keeps groups past its limits for review', async () => {
    const { opened, open } = opener();
    const many = Array.from({ length: MAX_GROUP_TARGETS + 1 }, (_, i) => `https://e.com/p${i}`);
    const cleared = await equivalentLinks([
      { selectors: ['#x1', '#x2'], targets: ['https://act.example/', 'https://e.com/about/contact'] },
      { selectors: ['#m'], targets: many },
    ], page, open);
    expect(cleared.size).toBe(0);
    expect(opened).toEqual([]);

    const budget = opener();
    const groups = Array.from({ length: MAX_DESTINATIONS }, (_, i) => ({ selectors: [`#g${i}`], targets: [`https://e.com/g${i}/a`, `https://e.com/g${i}/b`] }));
    await equivalentLinks(groups, page, budget.open);
    expect(budget.opened).toHaveLength(MAX_DESTINATIONS);
  });

  it('still clears the groups settled when the budget runs out, and keeps those waiting on a target', async () => {
    const open = (url: string) => (url === 'https://e.com/never' ? new Promise<Destination | null>(() => undefined) : Promise.resolve(site[url] ?? null));
    const cleared = await equivalentLinks([
      { selectors: ['#a1', '#a2'], targets: ['https://e.com/about/contact', 'https://e.com/careers/contact'] },
      { selectors: ['#n1', '#n2'], targets: ['https://e.com/never', 'https://e.com/about/contact'] },
    ], page, open, 50);
    expect([...cleared].sort()).toEqual(['#a1', '#a2']);
  });

  it('keeps a group when opening a target throws', async () => {
    const cleared = await equivalentLinks([{ selectors: ['#a'], targets: ['https://e.com/1', 'https://e.com/2'] }], page, () => Promise.reject(new Error('boom')));
    expect(cleared.size).toBe(0);
  });
});
