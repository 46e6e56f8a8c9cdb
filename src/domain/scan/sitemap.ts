/** Reading sitemaps (sitemaps.org protocol): a <urlset> of pages or a <sitemapindex> of sitemaps. */

export interface Sitemap {
  kind: 'urlset' | 'index';
  /** The <loc> values, entity-decoded, in document order. */
  locations: string[];
}

/** Tolerant by design: a regular expression over <loc> copes with sitemaps that are not quite XML. */
export function parseSitemap(xml: string): Sitemap {
  const kind = /<(?:[\w-]+:)?sitemapindex[\s>]/i.test(xml) ? 'index' : 'urlset';
  const locations: string[] = [];
  for (const match of xml.matchAll(/<(?:[\w-]+:)?loc\s*>([\s\S]*?)<\/(?:[\w-]+:)?loc\s*>/gi)) {
    const value = decodeXmlText(match[1]!.trim());
    if (value) locations.push(value);
  }
  return { kind, locations };
}

function decodeXmlText(text: string): string {
  const cdata = /^<!\[CDATA\[([\s\S]*)\]\]>$/.exec(text);
  if (cdata) return cdata[1]!.trim();
  return text
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}
