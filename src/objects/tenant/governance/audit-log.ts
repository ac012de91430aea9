import { and, desc, eq } from "drizzle-orm";
import * as schema from "../../../db/tenant-schema";
import { z } from "zod";
import type { Result } from "../../../core/runtime/result";
import type { Page } from "../../../schema/common";
import { keysetPage } from "../../shared/keyset";
import { cursorPage } from "../../shared/paging";
import { nowIso } from "../../shared/sqlite";
import type { TenantDb } from "../types";

/**
 * The tenant's audit log, its one writer and its readers. Every audited action in the tenant goes
 * through `writeAudit` (inside the caller's transaction when given one); the TenantDO's `audit` RPC
 * (the operator audit object records tenant erasures through it) is the same writer.
 */
export interface AuditEntry {
  seq: number;
  at: string;
  actor: string;
  action: string;
  target: string | null;
  detail: Record<string, unknown>;
}

/** `GET /v1/audit`: newest first, keyset-paginated on seq; the cursor is `{s: seq}` of the page's last entry. */
export function auditPage(db: TenantDb, query: { limit: number; cursor?: string | undefined }): Result<Page<AuditEntry>> {
  return cursorPage(query.cursor, z.object({ s: z.number().int() }), (before) => {
    const { rows, last } = keysetPage(db, { table: schema.audit, sort: schema.audit.seq, order: "desc", limit: query.limit, from: before && { c: before.s } });
    return { data: rows, last: last && { s: last.seq } };
  });
}

/** Appends one entry (inside the caller's transaction when `db` is one). */
export function writeAudit(db: Pick<TenantDb, "insert">, actor: string, action: string, target: string | null, detail: Record<string, unknown>): void {
  db.insert(schema.audit).values({ at: nowIso(), actor, action, target, detail }).run();
}

/** Operator audit object only: the newest entry about `target` with `action`. */
export function findAudit(db: TenantDb, action: string, target: string): AuditEntry | null {
  return db.select().from(schema.audit).where(and(eq(schema.audit.action, action), eq(schema.audit.target, target))).orderBy(desc(schema.audit.seq)).limit(1).get() ?? null;
}
