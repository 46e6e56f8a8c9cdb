/**
 * The documents a scan session shows its pages' navigations, by URL: the crawler's copy of a page
 * being checked, and the targets of links named alike that another page's check follows. The same
 * URL may be both at once (two pages in flight), so each showing is counted, and a document goes
 * only when its last user lets go of it; a page being checked shows the crawler's copy.
 */
export class ShownDocuments {
  private readonly shown = new Map<string, { html: string; users: number }>();

  /** The HTML shown at `url`, if any. */
  htmlAt(url: string): string | undefined {
    return this.shown.get(url)?.html;
  }

  /** Shows `html` at `url` until the returned release (idempotent); `own`: the crawler's copy of a page being checked, which replaces a follow's. */
  show(url: string, html: string, own = false): () => void {
    const entry = this.shown.get(url);
    if (entry) {
      entry.users++;
      if (own) entry.html = html;
    } else this.shown.set(url, { html, users: 1 });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = this.shown.get(url);
      if (now && --now.users === 0) this.shown.delete(url);
    };
  }
}
