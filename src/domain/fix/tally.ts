/** Counts what a fixer did, per kind, and reads it back as an English list. */
import { plural } from './dom.js';

export class Tally {
  private readonly counts = new Map<string, { singular: string; pluralForm: string; prefix: string; n: number }>();

  /** Records one change: "<prefix> <n> <noun>", e.g. add('alt="" on', 'decorative image'). */
  add(prefix: string, singular: string, pluralForm = `${singular}s`): void {
    const key = `${prefix}|${singular}`;
    const entry = this.counts.get(key) ?? { singular, pluralForm, prefix, n: 0 };
    entry.n++;
    this.counts.set(key, entry);
  }

  get total(): number {
    let n = 0;
    for (const e of this.counts.values()) n += e.n;
    return n;
  }

  /** "alt="" on 1 decorative image and an alt placeholder on 2 images". */
  describe(): string {
    const parts = Array.from(this.counts.values(), (e) => `${e.prefix} ${plural(e.n, e.singular, e.pluralForm)}`.trim());
    if (parts.length <= 1) return parts.join('');
    return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
  }
}
