/**
 * The DevTools pipe as the browser uses it: NUL-separated JSON that arrives in arbitrary pieces,
 * answers matched to commands by id, events routed by session, and a browser that goes away with
 * commands still unanswered.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CdpConnection, CdpError } from '../../../src/domain/scan/chromium/cdp.js';

function pipe() {
  const toBrowser = new PassThrough();
  const fromBrowser = new PassThrough();
  const written: Record<string, unknown>[] = [];
  toBrowser.on('data', (d: Buffer) => {
    for (const part of d.toString().split('\0').filter(Boolean)) written.push(JSON.parse(part) as Record<string, unknown>);
  });
  return { connection: new CdpConnection(toBrowser, fromBrowser), fromBrowser, written };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('the DevTools pipe', () => {
  it('matches answers to commands, whatever pieces the bytes arrive in', async () => {
    const { connection, fromBrowser, written } = pipe();
    const first = connection.browser.send('Browser.getVersion');
    const second = connection.session('S1').send('Runtime.evaluate', { expression: '1+1' });
    await tick();
    expect(written).toEqual([
      { id: 1, method: 'Browser.getVersion', params: {} },
      { id: 2, method: 'Runtime.evaluate', params: { expression: '1+1' }, sessionId: 'S1' },
    ]);
    // The second answer first, split inside a two-byte character, with the first answer in the same chunk as its end.
    const bytes = Buffer.from(`${JSON.stringify({ id: 2, result: { result: { value: 'é2' } }, sessionId: 'S1' })}\0${JSON.stringify({ id: 1, result: { product: 'Chrome/156' } })}\0`);
    const insideE = bytes.indexOf(0xc3) + 1;
    fromBrowser.write(bytes.subarray(0, 10));
    fromBrowser.write(bytes.subarray(10, insideE));
    fromBrowser.write(bytes.subarray(insideE));
    expect(await second).toEqual({ result: { value: 'é2' } });
    expect(await first).toEqual({ product: 'Chrome/156' });
  });

  it("rejects a command the browser refuses, naming the command, and routes events to their session", async () => {
    const { connection, fromBrowser } = pipe();
    const events: unknown[] = [];
    connection.session('S1').on('Page.lifecycleEvent', (e) => events.push(e));
    const refused = connection.session('S1').send('Page.navigate', { url: 'x' });
    fromBrowser.write(`${JSON.stringify({ method: 'Page.lifecycleEvent', params: { name: 'load' }, sessionId: 'S1' })}\0`);
    fromBrowser.write(`${JSON.stringify({ method: 'Page.lifecycleEvent', params: { name: 'other session' }, sessionId: 'S2' })}\0`);
    fromBrowser.write(`${JSON.stringify({ id: 1, error: { code: -32000, message: 'Cannot navigate to invalid URL' }, sessionId: 'S1' })}\0`);
    await expect(refused).rejects.toThrow('Page.navigate: Cannot navigate to invalid URL');
    expect(events).toEqual([{ name: 'load' }]);
  });

  it('fails every unanswered command when the browser goes, and refuses new ones', async () => {
    const { connection, fromBrowser } = pipe();
    const pending = connection.session('S1').send('Runtime.evaluate', { expression: 'while(true){}' });
    let detached = false;
    connection.session('S1').onDetach(() => (detached = true));
    fromBrowser.destroy();
    await expect(pending).rejects.toBeInstanceOf(CdpError);
    expect(detached).toBe(true);
    expect(connection.closed).toBe(true);
    await expect(connection.browser.send('Browser.getVersion')).rejects.toThrow('closed');
  });

  it('detaches a session when the browser says its target went', async () => {
    const { connection, fromBrowser } = pipe();
    const session = connection.session('S9');
    const pending = session.send('Runtime.evaluate', { expression: '1' });
    fromBrowser.write(`${JSON.stringify({ method: 'Target.detachedFromTarget', params: { sessionId: 'S9' } })}\0`);
    await tick();
    expect(session.isDetached).toBe(true);
    await expect(session.send('Page.enable')).rejects.toThrow('the target is gone');
    // A command already sent is answered or failed by the browser itself; the connection lives on.
    fromBrowser.write(`${JSON.stringify({ id: 1, error: { message: 'Session with given id not found.' } })}\0`);
    await expect(pending).rejects.toThrow('Session with given id not found');
    expect(connection.closed).toBe(false);
  });
});
