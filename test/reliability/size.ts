/** Sizes of the reliability suite: small enough for `make test`, full with RELIABILITY=full (`make reliability`). */
export const FULL = process.env.RELIABILITY === 'full';
export const size = <T>(quick: T, full: T): T => (FULL ? full : quick);
/** One line per figure, so the numbers can be quoted. */
export const report = (what: string, figures: Record<string, number | string>) =>
  console.log(`[reliability${FULL ? ' full' : ''}] ${what}: ${Object.entries(figures).map(([k, v]) => `${k} ${typeof v === 'number' ? v.toLocaleString('en') : v}`).join(', ')}`);
