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

  /** Items `owner` has waiting. */
  sizeOf(owner: string): number {
    return this.waiting.get(owner)?.items.length ?? 0;
  }

  /** The next item: the waiting owner served least recently, its oldest item; only owners `eligible` admits. */
  shift(eligible?: (owner: string) => boolean): T | undefined {
    let turn: { owner: string; last: number; since: number } | undefined;
    for (const [owner, { since }] of this.waiting) {
      if (eligible && !eligible(owner)) continue;
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
 * At most `size` holders, and at most `maxPerOwner` of them with one owner (by default all of them):
 * with a cap below `size`, one owner's slow pages never hold every slot, so another owner's page
 * starts at once. Waiters are served in turns by owner (a bystander's page gets the next free
 * slot, not the one after a flood's hundreds), skipping owners at their cap, and may withdraw.
 */
export class FairSemaphore {
  private held = 0;
  private readonly holders = new Map<string, number>();
  private readonly waiting = new FairQueue<{ owner: string; go(): void }>();
  constructor(
    private readonly size: number,
    readonly maxPerOwner = size,
  ) {
    if (!(maxPerOwner >= 1)) throw new RangeError(`maxPerOwner must be at least 1 (got ${maxPerOwner})`);
  }

  /** Waiting for a slot now. */
  get queued(): number {
    return this.waiting.size;
  }

  /** Slots `owner` holds now. */
  heldBy(owner: string): number {
    return this.holders.get(owner) ?? 0;
  }

  /** Waiters of `owner` now. */
  queuedFor(owner: string): number {
    return this.waiting.sizeOf(owner);
  }

  acquire(owner: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.held < this.size && this.heldBy(owner) < this.maxPerOwner) {
      this.take(owner);
      this.waiting.noteServed(owner);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry = { owner, go: () => { signal?.removeEventListener('abort', onAbort); resolve(); } };
      const onAbort = () => {
        this.waiting.remove(owner, entry);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(owner, entry);
    });
  }

  /** Gives back a slot `owner` held; the fairest waiter under its cap takes it. */
  release(owner: string): void {
    const mine = this.heldBy(owner);
    if (mine <= 1) this.holders.delete(owner);
    else this.holders.set(owner, mine - 1);
    this.held--;
    const eligible = (o: string) => this.heldBy(o) < this.maxPerOwner;
    while (this.held < this.size) {
      const next = this.waiting.shift(eligible);
      if (!next) return;
      this.take(next.owner);
      next.go();
    }
  }

  private take(owner: string): void {
    this.held++;
    this.holders.set(owner, this.heldBy(owner) + 1);
  }
}
