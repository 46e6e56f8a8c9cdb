/**
 * A URL shown by a page being checked and by another page's follow of its links at once: neither
 * letting go takes the document from the other (with two pages of one scan in flight, a follow that
 * ended used to remove the page's document mid-navigation, which failed it with ERR_ABORTED).
 */
import { describe, expect, it } from 'vitest';
import { ShownDocuments } from '../../../src/domain/scan/chromium/shown-documents.js';

describe('documents shown to a scan session', () => {
  it('stay while any user shows them, the checked page\'s copy first', () => {
    const docs = new ShownDocuments();
    const follow = docs.show('https://a.example/p', '<p>followed</p>');
    const check = docs.show('https://a.example/p', '<p>crawled</p>', true);
    expect(docs.htmlAt('https://a.example/p')).toBe('<p>crawled</p>');
    follow();
    follow(); // releasing twice counts once
    expect(docs.htmlAt('https://a.example/p')).toBe('<p>crawled</p>');
    const another = docs.show('https://a.example/p', '<p>followed again</p>');
    expect(docs.htmlAt('https://a.example/p')).toBe('<p>crawled</p>');
    check();
    expect(docs.htmlAt('https://a.example/p')).toBe('<p>crawled</p>');
    another();
    expect(docs.htmlAt('https://a.example/p')).toBeUndefined();
  });

  it('go when the checked page lets go and no follow shows them', () => {
    const docs = new ShownDocuments();
    const check = docs.show('https://a.example/q', '<p>q</p>', true);
    check();
    expect(docs.htmlAt('https://a.example/q')).toBeUndefined();
  });
});
