import { desc, lt } from "drizzle-orm";
import * as schema from "../../../db/tenant-schema";
import type { TenantDb } from "../types";

export interface AuditEntry {
  seq: number;
  at: string;
  actor: string;
  action: string;
  target: string | null;
  detail: Record<string, unknown>;
}

/** `GET /v1/audit`: newest first, before `beforeSeq` when paging. */
export function listAudit(db: TenantDb, limit: number, beforeSeq?: number): AuditEntry[] {
  return db
    .select()
    .from(schema.audit)
    .where(beforeSeq === undefined ? undefined : lt(schema.audit.seq, beforeSeq))
    .orderBy(desc(schema.audit.seq))
    .limit(limit)
    .all();
}
