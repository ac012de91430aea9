import { and, eq, isNull } from "drizzle-orm";
import { config } from "../../../config";
import * as schema from "../../../db/tenant-schema";
import { nowIso } from "../../shared/sqlite";
import type { TenantDb } from "../types";

export type IdempotencyBegin =
  | { state: "new" }
  | { state: "replay"; status: number; body: string }
  | { state: "conflict" }
  | { state: "in_progress" };

/**
 * Idempotency-Key records. `begin` claims the key atomically (the DO is single-threaded), so two
 * concurrent requests with one key cannot both perform the effect. A claim is a lease: while a
 * request holds it for less than `config.idempotency.leaseSeconds`, a retry answers `in_progress`;
 * past it the request is taken for dead (a Worker request cannot outlive it) and the retry claims
 * the key afresh. `created_at` of an unanswered row is its claim time. Records are pruned by the tenant's
 * retention pass (`idempotencyHours` of its policy, src/objects/tenant/retention.ts), nowhere else.
 */
export class IdempotencyStore {
  constructor(private readonly db: TenantDb) {}

  begin(scope: string, key: string, requestHash: string): IdempotencyBegin {
    const row = this.db
      .select()
      .from(schema.idempotency)
      .where(and(eq(schema.idempotency.scope, scope), eq(schema.idempotency.key, key)))
      .get();
    if (!row) {
      this.db.insert(schema.idempotency).values({ scope, key, requestHash, createdAt: nowIso() }).run();
      return { state: "new" };
    }
    if (row.requestHash !== requestHash) return { state: "conflict" };
    if (row.status === null || row.response === null) return this.takeOverLapsed(scope, key, row.createdAt) ? { state: "new" } : { state: "in_progress" };
    return { state: "replay", status: row.status, body: row.response };
  }

  complete(scope: string, key: string, status: number, body: string): void {
    this.db
      .update(schema.idempotency)
      .set({ status, response: body })
      .where(and(eq(schema.idempotency.scope, scope), eq(schema.idempotency.key, key)))
      .run();
  }

  /** Releases a claim whose request failed without an effect, so the client may retry. */
  abort(scope: string, key: string): void {
    this.db.delete(schema.idempotency).where(and(eq(schema.idempotency.scope, scope), eq(schema.idempotency.key, key))).run();
  }

  /** Renews a lapsed claim for the caller; false while the holder's lease still runs. */
  private takeOverLapsed(scope: string, key: string, claimedAt: string): boolean {
    const nowMs = Date.now();
    if (Date.parse(claimedAt) + config.idempotency.leaseSeconds * 1000 > nowMs) return false;
    const i = schema.idempotency;
    this.db.update(i).set({ createdAt: new Date(nowMs).toISOString() }).where(and(eq(i.scope, scope), eq(i.key, key), isNull(i.status))).run();
    return true;
  }
}
