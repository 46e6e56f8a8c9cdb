/**
 * Pages waiting for the engine's slots are served in turns by owner (org), not first come, first
 * served: a bystander's page queued behind a flood's pages gets the next free slot.
 */
import { describe, expect, it } from 'vitest';
import { FairQueue, FairSemaphore } from '../../../src/domain/scan/fair-queue.js';

describe('FairQueue', () => {
  it("serves a newcomer's item before the waiting flood, then takes turns", () => {
    const q = new FairQueue<string>();
    for (let i = 1; i <= 4; i++) q.push('flood', `a${i}`);
    expect(q.shift()).toBe('a1');
    q.push('bystander', 'b1');
    q.push('bystander', 'b2');
    q.push('third', 'c1');
    expect(q.size).toBe(6);
    const order: string[] = [];
    for (let item = q.shift(); item !== undefined; item = q.shift()) order.push(item);
    // The flood was served last; the bystander (waiting longer) and the third org had not been served.
    expect(order).toEqual(['b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
    expect(q.size).toBe(0);
  });

  it('keeps each owner in order and lets a waiter withdraw', () => {
    const q = new FairQueue<string>();
    q.push('a', 'a1');
    q.push('a', 'a2');
    q.push('b', 'b1');
    expect(q.remove('a', 'a1')).toBe(true);
    expect(q.remove('a', 'a1')).toBe(false);
    expect(q.remove('b', 'b1')).toBe(true);
    expect(q.size).toBe(1);
    expect(q.shift()).toBe('a2');
    expect(q.shift()).toBeUndefined();
    q.push('c', 'c1');
    expect(q.drain()).toEqual(['c1']);
    expect(q.size).toBe(0);
  });
});

describe('FairSemaphore (Chromium page slots)', () => {
  it("gives the next free slot to another owner's page, not to the flood's next page", async () => {
    const slots = new FairSemaphore(1);
    const granted: string[] = [];
    const take = (owner: string, name: string) => slots.acquire(owner).then(() => granted.push(name));
    await take('flood', 'a1');
    const waiting = [take('flood', 'a2'), take('flood', 'a3'), take('flood', 'a4'), take('bystander', 'b1')];
    // Each release by the owner of the slot just granted.
    for (const owner of ['flood', 'bystander', 'flood', 'flood']) {
      slots.release(owner);
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(waiting);
    expect(granted).toEqual(['a1', 'b1', 'a2', 'a3', 'a4']);
  });

  it('lets a waiter withdraw without taking a slot', async () => {
    const slots = new FairSemaphore(1);
    await slots.acquire('a');
    const controller = new AbortController();
    const withdrawn = slots.acquire('b', controller.signal);
    controller.abort(new Error('scan stopped'));
    await expect(withdrawn).rejects.toThrow('scan stopped');
    const next = slots.acquire('c');
    slots.release('a');
    await next; // the slot went to c, not to the waiter that left
  });
});

describe('FairSemaphore with a cap per owner (one slot kept for other orgs)', () => {
  it("never lets one owner hold every slot: another owner's page is admitted at once", async () => {
    const slots = new FairSemaphore(2, 1);
    const granted: string[] = [];
    const take = (owner: string, name: string) => slots.acquire(owner).then(() => void granted.push(name));
    // Six pages of one org: one slot, five waiting, although a second slot is free.
    const flood = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'].map((name) => take('flood', name));
    await new Promise((r) => setImmediate(r));
    expect(granted).toEqual(['a1']);
    expect([slots.heldBy('flood'), slots.queuedFor('flood')]).toEqual([1, 5]);
    // Another org's page takes the free slot without anyone releasing one.
    await take('bystander', 'b1');
    expect(granted).toEqual(['a1', 'b1']);
    expect(slots.heldBy('bystander')).toBe(1);
    // The flood's next page goes when its own slot comes back, not when the bystander's does.
    slots.release('bystander');
    await new Promise((r) => setImmediate(r));
    expect(granted).toEqual(['a1', 'b1']);
    slots.release('flood');
    await new Promise((r) => setImmediate(r));
    expect(granted).toEqual(['a1', 'b1', 'a2']);
    for (let i = 0; i < 4; i++) {
      slots.release('flood');
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(flood);
    expect(granted).toEqual(['a1', 'b1', 'a2', 'a3', 'a4', 'a5', 'a6']);
    expect([slots.heldBy('flood'), slots.queued]).toEqual([1, 0]);
  });

  it('serves waiters of several owners as their caps allow', async () => {
    const slots = new FairSemaphore(3, 2);
    const granted: string[] = [];
    const take = (owner: string, name: string) => slots.acquire(owner).then(() => void granted.push(name));
    const all = [take('a', 'a1'), take('a', 'a2'), take('a', 'a3'), take('b', 'b1'), take('b', 'b2'), take('c', 'c1')];
    await new Promise((r) => setImmediate(r));
    // a at its cap of two; b took the third slot; b2 and c1 wait for a slot, a3 for a's cap.
    expect(granted).toEqual(['a1', 'a2', 'b1']);
    slots.release('a');
    await new Promise((r) => setImmediate(r));
    // Every owner is under its cap now: c, never served, goes first.
    expect(granted).toEqual(['a1', 'a2', 'b1', 'c1']);
    slots.release('b');
    await new Promise((r) => setImmediate(r));
    expect(granted.slice(4)).toEqual(['a3']); // a was served before b was
    slots.release('c');
    await new Promise((r) => setImmediate(r));
    expect(granted.slice(5)).toEqual(['b2']);
    await Promise.all(all);
  });
});
