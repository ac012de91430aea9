import { utf8ByteLength } from "../../../core/memory/memory-policy";
import type { AgentDb } from "../types";

/**
 * A hot page row as its statement returns it (rows/hot-page.ts `PAGE_COLUMNS` order), with `prev_message_id` and
 * `run_key` already resolved. Kept as stored values, not decoded objects: every assemble decodes its own copy, so no
 * caller can change what the next one reads.
 */
export type PageRow = StoredValue[];

/** A stored value as workerd's SQL API returns it (`SqlStorageValue`, spelled out: unit tests type-check without the Workers types). */
export type StoredValue = ArrayBuffer | string | number | null;

/** A thread's uncompacted raw messages as the compaction planner counts them (its `ADDED` read). */
export interface ThreadTotals {
  /** The newest raw message counted. */
  throughSeq: number;
  count: number;
  tokens: number;
}

/** The summaries read's rows (memory-context.ts: warm, cold, then the slots and report heads row). */
export type SummariesRows = StoredValue[][];

/**
 * Pages kept at once (issue 12 §8, session 12): a run answers in one thread, so a live conversation stays kept, and a
 * few more cover an agent serving several sessions at a time.
 */
export const MAX_KEPT_PAGES = 8;
/**
 * The kept pages' stored text (UTF-16 units of their string values) at most, per agent: an isolate hosts many agents,
 * and a page is ≤ `maxHotMessages` rows of any size. Least recently used pages go first; a page larger than this alone
 * is not kept (read on every assemble, as before session 12).
 */
export const MAX_KEPT_PAGE_CHARS = 256 * 1024;

/** Planner totals kept at once (three numbers each; the planner kept 256 before session 12). */
export const MAX_KEPT_TOTALS = 256;

/** A raw message's tokens as the planner counts them (its TOKENS_SQL): (UTF-8 bytes of text and content + 3) / 4 in integers, + 4. */
export function plannerTokens(text: string | null, content: string | null): number {
  return Math.floor((utf8ByteLength(text ?? "") + utf8ByteLength(content ?? "") + 3) / 4) + 4;
}

/** Page columns the totals read (rows/hot-page.ts `PAGE_COLUMNS`). */
const PAGE_SEQ = 0;
const PAGE_TEXT = 4;
const PAGE_CONTENT = 5;

/** A row's kept size: the length of its string values (text, content and metadata JSON, ids). */
function charsOf(row: PageRow): number {
  let n = 0;
  for (const value of row) if (typeof value === "string") n += value.length;
  return n;
}

/**
 * An EXACT in-memory copy of what the append + assemble op reads (issue 12 §8, session 12): per thread the hot page and
 * the planner's totals, per agent the summaries read (summaries, slots, report heads). Session 10 showed the op's floor
 * is workerd's per-`exec` cost, so the lever left was not reading what this object already knows.
 *
 * Exact because every writer of the rows behind it updates or drops it (a Durable Object is single-threaded):
 * - `History.append` (the only writer of `messages` in src) updates the thread's page and totals with the row it just
 *   wrote, as a read would give it (`appended`). Its one caller inside another's transaction is the summary commit,
 *   whose summary message changes nothing kept (both reads leave summary messages out); a future caller inside a
 *   transaction that may roll back must drop the thread when it does;
 * - the summary commit (summaries, thread_memory, a summary message) drops the summaries read and the thread's totals,
 *   and once its transaction committed trims the page to the moved pointer (`compacted`); a rolled-back commit drops
 *   the thread (a rollback of a copy's update could not be undone; a drop can);
 * - `AgentProfile` (agent_state's slots) and `Reports.publish` (report_heads) drop the summaries read;
 * - an erasure (`forgetRows`), the bench's seed and tests writing raw rows call `forget` / `forgetThread`.
 * Nothing else writes those tables (grep `messages`, `summaries`, `thread_memory`, `agent_state`, `report_heads`).
 * test/integration/memory-copy.test.ts compares the kept copy with the statements' fresh reads after each kind of write.
 */
export class MemoryCopy {
  /** Least recently used first (Map order is insertion order; a use re-inserts). */
  private readonly pages = new Map<string, { limit: number; rows: PageRow[]; chars: number }>();
  /** The kept pages' `chars`, summed. */
  private pageChars = 0;
  private readonly totals = new Map<string, ThreadTotals>();
  private summaries: { key: string; rows: SummariesRows } | null = null;
  /**
   * The state row said no summary was ever committed (its pointer is null: the first summary commit sets it, and it
   * only moves on), as `AgentProfile.state` last read it (session 15). Dropped with the summaries read, i.e. by every
   * summary commit once its transaction is over.
   */
  private summaryless = false;

  /** The thread's page read with `limit`, newest first; undefined when not kept. */
  page(threadId: string, limit: number): PageRow[] | undefined {
    const kept = this.pages.get(threadId);
    if (!kept) return undefined;
    if (kept.limit !== limit) {
      // A page of every row (limit -1: SQLite's "no limit") holds the page of any limit: its newest `limit` rows.
      if (kept.limit >= 0 || limit < 0) return undefined;
      let chars = 0;
      for (const old of kept.rows.splice(limit)) chars += charsOf(old);
      kept.chars -= chars;
      this.pageChars -= chars;
      kept.limit = limit;
    }
    this.pages.delete(threadId);
    this.pages.set(threadId, kept);
    return kept.rows;
  }

  keepPage(threadId: string, limit: number, rows: PageRow[]): void {
    this.dropPage(threadId);
    let chars = 0;
    for (const row of rows) chars += charsOf(row);
    this.pages.set(threadId, { limit, rows, chars });
    this.pageChars += chars;
    this.bound();
  }

  /** Least recently used pages out until both bounds hold (the newest page too, when it alone is over). */
  private bound(): void {
    while (this.pages.size > MAX_KEPT_PAGES || this.pageChars > MAX_KEPT_PAGE_CHARS) this.dropPage(this.pages.keys().next().value!);
  }

  private dropPage(threadId: string): void {
    const kept = this.pages.get(threadId);
    if (!kept) return;
    this.pageChars -= kept.chars;
    this.pages.delete(threadId);
  }

  /** The thread's planner totals as a fresh count would give them; undefined when not kept. Callers update them in place. */
  totalsOf(threadId: string): ThreadTotals | undefined {
    return this.totals.get(threadId);
  }

  keepTotals(threadId: string, totals: ThreadTotals): void {
    this.totals.delete(threadId);
    if (this.totals.size >= MAX_KEPT_TOTALS) this.totals.delete(this.totals.keys().next().value!);
    this.totals.set(threadId, totals);
  }

  dropTotals(threadId: string): void {
    this.totals.delete(threadId);
  }

  /**
   * A page just read with `limit` that came back short holds every raw row after the thread's pointer (the page and
   * the planner's count select the same rows), so the planner's totals follow from it when none are kept (session 15:
   * the plan after a cold agent's run counted them again, one statement of its own). An empty page says nothing of the
   * pointer, so it seeds nothing; nor does a text read back with U+FFFD, which may stand for stored bytes of another
   * length (a lone surrogate's: the count's byte lengths are of what is stored).
   */
  seedTotals(threadId: string, limit: number, rows: readonly PageRow[]): void {
    if (rows.length === 0 || limit < 0 || rows.length >= limit || this.totals.has(threadId)) return;
    let tokens = 0;
    for (const row of rows) {
      const text = row[PAGE_TEXT] as string | null;
      const content = row[PAGE_CONTENT] as string | null;
      if (text?.includes("\ufffd") || content?.includes("\ufffd")) return;
      tokens += plannerTokens(text, content);
    }
    this.keepTotals(threadId, { throughSeq: rows[0]![PAGE_SEQ] as number, count: rows.length, tokens });
  }

  /** The summaries read's rows for the statement `key` (its limits); undefined when not kept. */
  summariesRows(key: string): SummariesRows | undefined {
    return this.summaries?.key === key ? this.summaries.rows : undefined;
  }

  keepSummaries(key: string, rows: SummariesRows): void {
    this.summaries = { key, rows };
  }

  /**
   * `History.append` inserted a thread's first message (its insert found no message before it in the thread): every raw
   * row after the thread's pointer is this one, so the page of any limit and the planner's totals are known (session
   * 16: a subscription or timer wake runs in a thread of its own, and its context read back the one row it had just
   * written — on a cold wake the run's costliest statement). Kept as the page of every row (limit -1), cut to the
   * limit of the first `page` that asks.
   */
  newThread(threadId: string, kind: string, row: PageRow, tokens: number): void {
    if (kind === "summary") return;
    this.keepPage(threadId, -1, [row]);
    this.keepTotals(threadId, { throughSeq: row[PAGE_SEQ] as number, count: 1, tokens });
  }

  /**
   * `History.append` inserted `row` (page columns, links resolved) of `kind` with `tokens` (the planner's estimate):
   * the thread's newest message, so it heads the page and adds to the totals. A summary message is in neither (both
   * leave summaries out); its commit trims or drops the thread after it.
   */
  appended(threadId: string, kind: string, row: PageRow, tokens: number): void {
    if (kind === "summary") return;
    const kept = this.pages.get(threadId);
    if (kept) {
      // The page is the newest `limit` raw rows after the pointer; the new row is newer than all of them.
      const rows = [row, ...kept.rows];
      // (A negative limit is SQLite's "no limit".)
      const dropped = kept.limit >= 0 && rows.length > kept.limit ? rows.splice(kept.limit) : [];
      let chars = charsOf(row);
      for (const old of dropped) chars -= charsOf(old);
      kept.rows = rows;
      kept.chars += chars;
      this.pageChars += chars;
      this.bound();
    }
    const totals = this.totals.get(threadId);
    if (totals) {
      totals.count += 1;
      totals.tokens += tokens;
      totals.throughSeq = row[0] as number;
    }
  }

  /**
   * A summary commit moved the thread's compaction pointer to `throughSeq` (session 13; the thread was dropped before,
   * so the next assemble read its page again). The page is the newest `limit` raw rows after the pointer: the kept rows
   * after `throughSeq` are the new page. A raw row after `throughSeq` that the page left out is older than every kept
   * row, so it is left out only while the page keeps its `limit` rows all after `throughSeq` (then it is the same page);
   * and the commit's summary message is in no page. Rows keep their resolved links: the summary message is the newest
   * row of the thread, after every kept one. The totals are dropped (the rows leaving them are not all in the page).
   */
  compacted(threadId: string, throughSeq: number): void {
    this.totals.delete(threadId);
    const kept = this.pages.get(threadId);
    if (!kept) return;
    // Newest first: the rows to drop are a suffix.
    let keep = kept.rows.length;
    while (keep > 0 && (kept.rows[keep - 1]![0] as number) <= throughSeq) keep--;
    if (keep === kept.rows.length) return;
    const dropped = kept.rows.splice(keep);
    let chars = 0;
    for (const old of dropped) chars += charsOf(old);
    kept.chars -= chars;
    this.pageChars -= chars;
  }

  /** Drops the summaries read (a summary, the slots or a report head was written). */
  forgetSummaries(): void {
    this.summaries = null;
    this.summaryless = false;
  }

  /** The state row's summary pointer, as just read, is null. */
  knownNoSummaries(): void {
    this.summaryless = true;
  }

  /** No summary exists: the summaries read would give only its slots and report heads row. */
  noSummaries(): boolean {
    return this.summaryless;
  }

  /** Drops what is kept of one thread (its rows or its pointer were written past `History.append`). */
  forgetThread(threadId: string): void {
    this.dropPage(threadId);
    this.totals.delete(threadId);
  }

  /** Drops everything (an erasure; a test's raw write). */
  forget(): void {
    this.pages.clear();
    this.pageChars = 0;
    this.totals.clear();
    this.summaries = null;
    this.summaryless = false;
  }
}

let verifying = false;

/**
 * Test deployments (the fault seams on: every integration test) compare each kept copy with a fresh read where it is
 * used, and throw on a difference: a writer that forgets to update or drop the copy fails whatever test reaches it
 * (wiring.ts turns it on beside the statement sites' check). Never on in production or the bench.
 */
export function verifyMemoryCopy(on: boolean): void {
  verifying = on;
}

export function memoryCopyVerified(): boolean {
  return verifying;
}

export class MemoryCopyStale extends Error {
  constructor(what: string, kept: unknown, fresh: unknown) {
    super(`the memory copy's ${what} differs from a fresh read: kept ${JSON.stringify(kept)}, read ${JSON.stringify(fresh)}`);
    this.name = "MemoryCopyStale";
  }
}

/**
 * What a copy's user reads: the kept value, else `read()`, kept through `keep`. In test deployments a kept value is
 * also read afresh and handed to `check` (which throws `MemoryCopyStale` on a difference).
 */
export function keptOrRead<T>(kept: T | undefined, read: () => T, keep: (fresh: T) => void, check: (kept: T, fresh: T) => void): T {
  if (kept === undefined) {
    const fresh = read();
    keep(fresh);
    return fresh;
  }
  if (verifying) check(kept, read());
  return kept;
}

/** Throws `MemoryCopyStale` unless the rows' first `width` values (all when undefined) are the same. */
export function assertSameRows(what: string, kept: StoredValue[][], fresh: StoredValue[][], width?: number): void {
  const same = kept.length === fresh.length && kept.every((row, i) => {
    const other = fresh[i]!;
    const n = width ?? Math.max(row.length, other.length);
    for (let c = 0; c < n; c++) if (row[c] !== other[c]) return false;
    return true;
  });
  if (!same) throw new MemoryCopyStale(what, kept.map((row) => row.slice(0, width)), fresh.map((row) => row.slice(0, width)));
}

/** One copy per database, so every part writing these rows reaches the same copy without being wired to it. */
const copies = new WeakMap<AgentDb, MemoryCopy>();

export function memoryCopy(db: AgentDb): MemoryCopy {
  let copy = copies.get(db);
  if (!copy) {
    copy = new MemoryCopy();
    copies.set(db, copy);
  }
  return copy;
}
