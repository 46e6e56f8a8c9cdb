/**
 * Who gets the next compute thread. Callers act for an owner (an organization): owners take turns
 * for the threads rather than first come, first served (fair-queue.ts, as the page checker does),
 * one owner may run at most a few tasks at once, so the others always find a thread free (when
 * there are two or more), and may have only a few more waiting. A task waits for its turn for a
 * bounded time, and its caller may withdraw it (a client that went away); every way out is a
 * WorkerPoolError naming why, so every call is answered.
 *
 * Background work (what follows a scan) takes turns like the rest but is exempt from the caps and
 * the wait bound: its callers bound how much they submit.
 */
import { FairSemaphore } from '../domain/scan/fair-queue.js';
import { WorkerPoolError } from './worker-pool.js';

export interface TurnLimits {
  /** Tasks running at once: the pool's threads. */
  threads: number;
  /** Tasks of all owners that may wait (background work not counted). */
  maxQueue: number;
  /** Tasks of one owner running at once. */
  maxRunningPerOwner: number;
  /** Tasks of one owner that may wait. */
  maxQueuedPerOwner: number;
  /** How long a task may wait for its turn. */
  waitMs: number;
}

export interface TurnOptions {
  signal?: AbortSignal;
  background?: boolean;
}

/** An owner's own slots, and how many of its tasks wait or run. */
interface Owner {
  running: FairSemaphore;
  waiting: number;
  holding: number;
  /** Of those, the ones the caps count (not background work). */
  counted: number;
}

export class ComputeTurns {
  /** The threads, taken in turns by owner. */
  private readonly threads: FairSemaphore;
  private readonly owners = new Map<string, Owner>();
  /** Tasks waiting (either for their owner's slot or for a thread), background work not counted. */
  private waitingCount = 0;
  private runningCount = 0;

  constructor(private readonly limits: TurnLimits) {
    this.threads = new FairSemaphore(limits.threads);
  }

  /** Tasks waiting for their turn (background work included). */
  get queued(): number {
    let n = 0;
    for (const owner of this.owners.values()) n += owner.waiting;
    return n;
  }

  /** Tasks waiting or running. */
  get pending(): number {
    return this.queued + this.runningCount;
  }

  /** Tasks of `owner` waiting or running, as its cap counts them. */
  pendingOf(owner: string): number {
    return this.owners.get(owner)?.counted ?? 0;
  }

  /**
   * Waits for `owner`'s turn; resolves with the function that gives the thread back.
   * @throws WorkerPoolError 'owner-busy' or 'queue-full' at once, 'waited' past the wait bound, or
   *   the signal's reason when the caller withdraws.
   */
  async acquire(owner: string, options: TurnOptions = {}): Promise<() => void> {
    const { signal, background = false } = options;
    signal?.throwIfAborted();
    const entry = this.ownerEntry(owner);
    const { maxRunningPerOwner, maxQueuedPerOwner, maxQueue, waitMs } = this.limits;
    if (!background) {
      if (entry.counted >= maxRunningPerOwner + maxQueuedPerOwner) {
        this.forget(owner, entry);
        throw new WorkerPoolError('owner-busy', `${entry.counted} tasks of the same organization are already waiting or running`);
      }
      if (this.waitingCount >= maxQueue) {
        this.forget(owner, entry);
        throw new WorkerPoolError('queue-full', `${this.waitingCount} tasks are already waiting`);
      }
    }
    // One signal for both waits: the caller's, and the wait bound's.
    const bound = new AbortController();
    const timer = background ? null : setTimeout(() => bound.abort(new WorkerPoolError('waited', `the task waited longer than ${waitMs} ms for a compute thread`)), waitMs);
    const onAbort = () => bound.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    entry.waiting++;
    if (!background) {
      entry.counted++;
      this.waitingCount++;
    }
    let ownSlot = false;
    try {
      await entry.running.acquire(owner, bound.signal);
      ownSlot = true;
      await this.threads.acquire(owner, bound.signal);
      entry.holding++;
      this.runningCount++;
    } catch (err) {
      if (ownSlot) entry.running.release(owner);
      if (!background) entry.counted--;
      throw err;
    } finally {
      if (timer !== null) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      entry.waiting--;
      if (!background) this.waitingCount--;
      this.forget(owner, entry);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.holding--;
      if (!background) entry.counted--;
      this.runningCount--;
      this.threads.release(owner);
      entry.running.release(owner);
      this.forget(owner, entry);
    };
  }

  private ownerEntry(owner: string): Owner {
    let entry = this.owners.get(owner);
    if (entry === undefined) {
      entry = { running: new FairSemaphore(this.limits.maxRunningPerOwner), waiting: 0, holding: 0, counted: 0 };
      this.owners.set(owner, entry);
    }
    return entry;
  }

  /** An owner with nothing waiting or running is dropped, so the map holds only the busy ones. */
  private forget(owner: string, entry: Owner): void {
    if (entry.waiting === 0 && entry.holding === 0 && this.owners.get(owner) === entry) this.owners.delete(owner);
  }
}
