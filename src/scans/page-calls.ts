/**
 * dashboard_scan_page calls in progress in this process, per org. A call checks its page in the
 * same browser page slots as the site scans' pages, in turn with other orgs and under the same
 * per-org cap (SCAN_PAGE_SLOTS_PER_ORG); this bounds how many more an org may have waiting
 * (SCAN_PAGE_MAX_QUEUED_PER_ORG), so a flood of calls is refused before it fetches anything
 * instead of queueing without end.
 */

export type PageCallAdmission =
  | { admitted: true; release(): void }
  | { admitted: false; inProgress: number; retryAfterSeconds: number };

export class PageCalls {
  /** When each org's calls in progress began (ms), oldest first. */
  private readonly started = new Map<string, number[]>();

  constructor(
    /** Calls one org may have in progress: its page slots and the calls that may wait for them. */
    readonly maxPerOrg: number,
    /** The longest a call holds a slot (the page deadline), for retryAfterSeconds. */
    private readonly pageTimeoutSeconds: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Calls `orgId` has in progress now. */
  inProgress(orgId: string): number {
    return this.started.get(orgId)?.length ?? 0;
  }

  admit(orgId: string): PageCallAdmission {
    const mine = this.started.get(orgId) ?? [];
    if (mine.length >= this.maxPerOrg) {
      // The oldest call ends within a page deadline of its start (or of its turn, if it waited).
      const elapsed = (this.now() - mine[0]!) / 1000;
      return { admitted: false, inProgress: mine.length, retryAfterSeconds: Math.max(1, Math.ceil(this.pageTimeoutSeconds - elapsed)) };
    }
    const at = this.now();
    mine.push(at);
    this.started.set(orgId, mine);
    let released = false;
    return {
      admitted: true,
      release: () => {
        if (released) return;
        released = true;
        mine.splice(mine.indexOf(at), 1);
        if (!mine.length) this.started.delete(orgId);
      },
    };
  }
}
