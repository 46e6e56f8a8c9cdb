/**
 * Work waiting for a scarce slot (a browser page, a checker thread), kept per owner (an org) and
 * served in turns rather than first come, first served: the next item is the oldest of the waiting
 * owner served least recently (never: first; ties: the one waiting longest). So one scan's hundreds
 * of pages wait behind a bystander's single page, not the other way round.
 */
export class FairQueue<T> {
  /** Owners with something waiting: their items in order, and since when they wait. */
  private readonly waiting = new Map<string, { items: T[]; since: number }>();
  /** When each owner was last served, least recent first; bounded (a forgotten owner counts as never served). */
  private readonly served = new Map<string, number>();
  private ticks = 0;
  private count = 0;

  constructor(private readonly remembered = 1000) {}

  get size(): number {
    return this.count;
  }

  push(owner: string, item: T): void {
    let entry = this.waiting.get(owner);
    if (!entry) {
      entry = { items: [], since: ++this.ticks };
      this.waiting.set(owner, entry);
    }
    entry.items.push(item);
    this.count++;
  }

  /** Withdraws a waiting item (its waiter gave up); false when it is not waiting. */
  remove(owner: string, item: T): boolean {
    const entry = this.waiting.get(owner);
    const index = entry?.items.indexOf(item) ?? -1;
    if (!entry || index < 0) return false;
    entry.items.splice(index, 1);
    this.count--;
    if (!entry.items.length) this.waiting.delete(owner);
    return true;
  }

  /** The next item: the waiting owner served least recently, its oldest item. */
  shift(): T | undefined {
    let turn: { owner: string; last: number; since: number } | undefined;
    for (const [owner, { since }] of this.waiting) {
      const last = this.served.get(owner) ?? 0;
      if (!turn || last < turn.last || (last === turn.last && since < turn.since)) turn = { owner, last, since };
    }
    if (!turn) return undefined;
    const entry = this.waiting.get(turn.owner)!;
    const item = entry.items.shift()!;
    this.count--;
    if (!entry.items.length) this.waiting.delete(turn.owner);
    this.noteServed(turn.owner);
    return item;
  }

  /** Records that `owner` was served (also when it got a slot without waiting). */
  noteServed(owner: string): void {
    this.served.delete(owner);
    this.served.set(owner, ++this.ticks);
    if (this.served.size <= this.remembered) return;
    for (const old of this.served.keys()) {
      if (this.served.size <= this.remembered) break;
      if (!this.waiting.has(old)) this.served.delete(old);
    }
  }

  /** Empties the queue, returning what waited. */
  drain(): T[] {
    const all = [...this.waiting.values()].flatMap((e) => e.items);
    this.waiting.clear();
    this.count = 0;
    return all;
  }
}

/**
 * At most `size` holders; waiters are served in turns by owner (a bystander's page gets the next
 * free slot, not the one after a flood's hundreds), and may withdraw.
 */
export class FairSemaphore {
  private held = 0;
  private readonly waiting = new FairQueue<{ go(): void }>();
  constructor(private readonly size: number) {}

  /** Waiting for a slot now. */
  get queued(): number {
    return this.waiting.size;
  }

  acquire(owner: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.held < this.size) {
      this.held++;
      this.waiting.noteServed(owner);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry = { go: () => { signal?.removeEventListener('abort', onAbort); resolve(); } };
      const onAbort = () => {
        this.waiting.remove(owner, entry);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(owner, entry);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next.go();
    else this.held--;
  }
}
