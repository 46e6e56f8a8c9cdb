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
    for (let i = 0; i < 4; i++) {
      slots.release();
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
    slots.release();
    await next; // the slot went to c, not to the waiter that left
  });
});
