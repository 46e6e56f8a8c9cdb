/**
 * Work waiting for a scarce slot (a browser page, a checker thread), kept per owner (an org) and
 * served in turns rather than first come, first served: the next item is the oldest of the owner
 * served least recently, and an owner that had nothing waiting comes before every owner that did.
 * So one scan's hundreds of pages wait behind a bystander's single page, not the other way round.
 */
export class FairQueue<T> {
  /** Owners with something waiting: their items in order, and when they were last served (0: not since they last had nothing waiting). */
  private readonly owners = new Map<string, { items: T[]; lastServed: number; since: number }>();
  private ticks = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(owner: string, item: T): void {
    let entry = this.owners.get(owner);
    if (!entry) {
      entry = { items: [], lastServed: 0, since: ++this.ticks };
      this.owners.set(owner, entry);
    }
    entry.items.push(item);
    this.count++;
  }

  /** Withdraws a waiting item (its waiter gave up); false when it is not waiting. */
  remove(owner: string, item: T): boolean {
    const entry = this.owners.get(owner);
    const index = entry?.items.indexOf(item) ?? -1;
    if (!entry || index < 0) return false;
    entry.items.splice(index, 1);
    this.count--;
    if (!entry.items.length) this.owners.delete(owner);
    return true;
  }

  /** The next item: the owner served least recently (ties: the one waiting longest), its oldest. */
  shift(): T | undefined {
    let turn: [string, { items: T[]; lastServed: number; since: number }] | undefined;
    for (const candidate of this.owners) {
      const [, e] = candidate;
      if (!turn || e.lastServed < turn[1].lastServed || (e.lastServed === turn[1].lastServed && e.since < turn[1].since)) turn = candidate;
    }
    if (!turn) return undefined;
    const [owner, entry] = turn;
    const item = entry.items.shift()!;
    this.count--;
    entry.lastServed = ++this.ticks;
    if (!entry.items.length) this.owners.delete(owner);
    return item;
  }

  /** Empties the queue, returning what waited. */
  drain(): T[] {
    const all = [...this.owners.values()].flatMap((e) => e.items);
    this.owners.clear();
    this.count = 0;
    return all;
  }
}
