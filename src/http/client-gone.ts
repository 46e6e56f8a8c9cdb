/**
 * A signal that aborts when a request's client goes away (its connection closes) before the
 * response is written, so that work still queued for it can be withdrawn rather than done for
 * nobody.
 */
import type { Context } from 'koa';

export function clientGone(ctx: Context): AbortSignal {
  const controller = new AbortController();
  const { res } = ctx;
  const gone = () => controller.abort(new Error('the client went away'));
  if (res.destroyed && !res.writableFinished) gone();
  else if (!res.writableFinished) res.once('close', () => res.writableFinished || gone());
  return controller.signal;
}
