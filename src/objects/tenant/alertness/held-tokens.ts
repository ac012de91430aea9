import { sql } from "drizzle-orm";
import type { IndexProbe } from "../../../core/wakes/subscription-index";
import type { TenantDb } from "../types";
import { handWritten } from "../../shared/sqlite";

/** Index rows read at most to learn the tokens (a tenant with more asks SQLite on every probe, as before). */
const READ_ROWS = 20_000;

/**
 * The distinct tokens of the subscription index, read in one statement from at most `READ_ROWS` of its rows, with
 * whether that was all of them (`rows` counts the rows read, so a full read is one that stopped short of the limit).
 */
const READ = handWritten<{ tokenClass: string; tokenNamespace: string; tokenValue: string; rows: number }>((v) => sql`WITH held AS (SELECT "token_class", "token_namespace", "token_value" FROM "subscription_tokens" LIMIT ${v.limit})
    SELECT DISTINCT "token_class" AS "tokenClass", "token_namespace" AS "tokenNamespace", "token_value" AS "tokenValue", (SELECT count(*) FROM held) AS "rows" FROM held`);

const keyOf = (tokenClass: string, tokenNamespace: string, tokenValue: string) => `${tokenClass}\u0000${tokenNamespace}\u0000${tokenValue}`;

/**
 * Every token the subscription index may hold, kept in memory (issue 12 §7, session 14): a run report asks whether
 * another agent follows its tokens, and in a fan-out none does, so the answer is known without a statement when no
 * probe's token is held at all. Exact because it is a SUPERSET of the index's tokens: loaded from the table once, and
 * every token is added before a subscription's rows are inserted (`SubscriptionStore.create`, their only writer).
 * Deletes (tombstones, an agent's or the tenant's erasure) leave tokens here, which only sends those probes to SQLite
 * as before. A probe on a held token is always asked of SQLite (the agent itself, tombstones and the directory join
 * decide there). Null when the index has `READ_ROWS` rows or more: every probe is asked.
 */
export class HeldTokens {
  private held: Set<string> | null | undefined;

  constructor(private readonly db: TenantDb) {}

  /** A subscription's index rows are about to be inserted. */
  add(rows: readonly { tokenClass: string; tokenNamespace: string; tokenValue: string }[]): void {
    if (!this.held) return;
    for (const row of rows) this.held.add(keyOf(row.tokenClass, row.tokenNamespace, row.tokenValue));
  }

  /** True when no probe's token is in the index: no subscription at all, the agent's own or another's, can match. */
  noneHeld(probes: readonly IndexProbe[]): boolean {
    if (this.held === undefined) this.held = this.load();
    const held = this.held;
    return held !== null && probes.every((probe) => !held.has(keyOf(probe.tokenClass, probe.tokenNamespace, probe.tokenValue)));
  }

  private load(): Set<string> | null {
    const rows = READ(this.db).all({ limit: READ_ROWS });
    if ((rows[0]?.rows ?? 0) >= READ_ROWS) return null;
    return new Set(rows.map((row) => keyOf(row.tokenClass, row.tokenNamespace, row.tokenValue)));
  }
}
