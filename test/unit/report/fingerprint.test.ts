import { describe, expect, it } from 'vitest';
import { fingerprintsOf, stableMarkup, stableSelector, withFingerprints } from '../../../src/domain/report/fingerprint.js';

const img = { code: 'image-alt', selector: 'main > img:nth-child(2)', context: '<img src="/hero.jpg" class="hero">' };

describe('a finding\'s fingerprint', () => {
  it('is the same for the same rule, page and element', () => {
    expect(fingerprintsOf('https://a.example/shop', [img])).toEqual(fingerprintsOf('https://a.example/shop', [{ ...img }]));
    expect(fingerprintsOf('https://a.example/shop', [img])[0]).toMatch(/^[0-9a-f]{32}$/);
  });

  it('survives reordering of the element among its siblings and other findings', () => {
    const moved = { ...img, selector: 'main > img:nth-child(5)' };
    const other = { code: 'link-name', selector: 'a', context: '<a href="/x"></a>' };
    const [before] = fingerprintsOf('https://a.example/shop', [img, other]);
    const after = fingerprintsOf('https://a.example/shop', [other, moved]);
    expect(after[1]).toBe(before);
  });

  it('survives attribute order, white space, a nonce, the element\'s content and the spelling of the page URL', () => {
    const respelled = { ...img, context: '<IMG  class="hero"\n src="/hero.jpg" nonce="r4nd0m">and some text</IMG>' };
    expect(fingerprintsOf('https://A.example/shop/?utm_source=mail#top', [respelled])).toEqual(fingerprintsOf('https://a.example/shop', [img]));
    expect(fingerprintsOf('https://a.example/index.html', [img])).toEqual(fingerprintsOf('https://a.example/', [img]));
  });

  it('changes with the rule, the page, the element\'s attributes or its path', () => {
    const base = fingerprintsOf('https://a.example/shop', [img])[0];
    expect(fingerprintsOf('https://a.example/shop', [{ ...img, code: 'role-img-alt' }])[0]).not.toBe(base);
    expect(fingerprintsOf('https://a.example/cart', [img])[0]).not.toBe(base);
    expect(fingerprintsOf('https://a.example/shop', [{ ...img, context: '<img src="/other.jpg" class="hero">' }])[0]).not.toBe(base);
    expect(fingerprintsOf('https://a.example/shop', [{ ...img, selector: 'footer > img:nth-child(2)' }])[0]).not.toBe(base);
  });

  it('tells identical elements apart by their order, and keeps the first one\'s when a copy is added', () => {
    const twin = { ...img, selector: 'main > img:nth-child(3)' };
    const [one, two] = fingerprintsOf('https://a.example/shop', [img, twin]);
    expect(one).not.toBe(two);
    expect(fingerprintsOf('https://a.example/shop', [img])[0]).toBe(one);
  });

  it('normalises selectors and markup as documented', () => {
    expect(stableSelector('main>ul li:first-child >  a:nth-of-type(3)')).toBe('main > ul li > a');
    expect(stableMarkup('<a  HREF="/x" id=\'y\' hidden>text</a>')).toBe('<a hidden href="/x" id="y">');
    expect(stableMarkup('just text,  not markup')).toBe('just text, not markup');
    expect(withFingerprints('https://a.example/', [img])[0]).toMatchObject({ code: 'image-alt', fingerprint: expect.stringMatching(/^[0-9a-f]{32}$/) });
  });
});
