import { and, eq, lt } from "drizzle-orm";
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
 * concurrent requests with one key cannot both perform the effect.
 */
export class IdempotencyStore {
  constructor(private readonly db: TenantDb) {}

  begin(scope: string, key: string, requestHash: string): IdempotencyBegin {
    this.expireOld();
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
    if (row.status === null || row.response === null) return { state: "in_progress" };
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

  private expireOld(): void {
    const cutoff = new Date(Date.now() - config.idempotency.retentionHours * 3_600_000).toISOString();
    this.db.delete(schema.idempotency).where(lt(schema.idempotency.createdAt, cutoff)).run();
  }
}
