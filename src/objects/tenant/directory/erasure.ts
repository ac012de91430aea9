import { and, desc, eq } from "drizzle-orm";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import * as schema from "../../../db/tenant-schema";
import type { Migrations } from "../../shared/sqlite";
import type { TenantDb } from "../types";
import { logEvent } from "../../../log";
import { reportedPartKey } from "../channels";

/** The TENANT-namespace object that keeps the operator's audit of tenant erasures (it is never a tenant: tenant ids are `t` + 16 chars). */
export const OPERATOR_AUDIT_OBJECT = "operator:audit";

/**
 * The tenant forgets an erased agent: its directory entry and every row of a table keyed by
 * `agent_id` (subscriptions and their tokens, triggers, decisions, applied operations, whatever
 * later tables add). Journal records and the audit log are the tenant's own and stay.
 */
export function forgetAgent(db: TenantDb, storage: DurableObjectStorage, agentId: string): Record<string, number> {
  const removed: Record<string, number> = {};
  // The runtime's own tables (_cf_KV, …) refuse pragma reads, so they are skipped before any is inspected.
  const tables = storage.sql
    .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
    .toArray()
    .map((row) => row.name)
    .filter((table) => storage.sql.exec<{ name: string }>(`SELECT name FROM pragma_table_info('${table.replace(/'/g, "''")}') WHERE name = 'agent_id'`).toArray().length > 0);
  for (const table of tables) {
    if (table === "audit") continue;
    const quoted = `"${table.replace(/"/g, '""')}"`;
    const n = storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${quoted} WHERE agent_id = ?`, agentId).toArray()[0]?.n ?? 0;
    if (n === 0) continue;
    storage.sql.exec(`DELETE FROM ${quoted} WHERE agent_id = ?`, agentId);
    removed[table] = n;
  }
  const reported = db.delete(schema.counters).where(eq(schema.counters.key, reportedPartKey(agentId))).returning({ key: schema.counters.key }).all();
  if (reported.length > 0) removed.counters = reported.length;
  const directory = db.delete(schema.agentDirectory).where(eq(schema.agentDirectory.id, agentId)).returning({ id: schema.agentDirectory.id }).all();
  if (directory.length > 0) removed.agent_directory = directory.length;
  return removed;
}

/** Every agent the tenant ever had (children and destroyed ones included), for a tenant erasure. */
export function allAgentIds(db: TenantDb): string[] {
  return db.select({ id: schema.agentDirectory.id }).from(schema.agentDirectory).all().map((row) => row.id);
}

export interface TenantErasure {
  tenantId: string;
  erasedAt: string;
  agentsErased: number;
}

export interface TenantErasureDeps {
  db: TenantDb;
  storage: DurableObjectStorage;
  tenantId: string;
  migrations: Migrations;
  /** Erases one agent's Durable Object whole; throws or answers not ok when it could not. */
  eraseAgent(agentId: string): Promise<{ ok: boolean }>;
  /** Writes the record that outlives the tenant (the operator audit object). */
  recordErasure(erasure: TenantErasure & { actor: string; tenantRows: Record<string, number> }): Promise<void>;
}

const AGENT_ERASE_CONCURRENCY = 8;

/**
 * `DELETE /v1/tenants/:id`: every agent first (a failure stops here, leaving the tenant intact and
 * the erasure retryable), then the record in the operator audit, then every row of the tenant's own
 * SQLite — keys, journal, directory, policies, audit, all of it.
 */
export async function eraseTenant(deps: TenantErasureDeps, actor: string): Promise<TenantErasure> {
  const ids = allAgentIds(deps.db);
  for (let i = 0; i < ids.length; i += AGENT_ERASE_CONCURRENCY) {
    const batch = ids.slice(i, i + AGENT_ERASE_CONCURRENCY);
    const results = await Promise.all(batch.map((id) => deps.eraseAgent(id)));
    // not_found is fine: the agent was already erased (an interrupted earlier attempt).
    if (results.some((result) => !result.ok && (result as { code?: string }).code !== "not_found")) throw new Error("an agent could not be erased; retry the tenant erasure");
  }
  const erasure: TenantErasure = { tenantId: deps.tenantId, erasedAt: new Date().toISOString(), agentsErased: ids.length };
  await deps.recordErasure({ ...erasure, actor, tenantRows: rowCounts(deps.storage) });
  await deps.storage.deleteAlarm();
  await deps.storage.deleteAll();
  // Empty schema again, so the object answers "no such tenant" (401 / 404) rather than SQL errors.
  await migrate(drizzleOf(deps.db), deps.migrations);
  logEvent("info", "tenant erased", { tenantId: deps.tenantId, agents: ids.length });
  return erasure;
}

function drizzleOf(db: TenantDb): Parameters<typeof migrate>[0] {
  return db as unknown as Parameters<typeof migrate>[0];
}

function rowCounts(storage: DurableObjectStorage): Record<string, number> {
  const counts: Record<string, number> = {};
  const tables = storage.sql
    .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
    .toArray()
    .map((row) => row.name);
  for (const table of tables) {
    const n = storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM "${table.replace(/"/g, '""')}"`).toArray()[0]?.n ?? 0;
    if (n > 0) counts[table] = n;
  }
  return counts;
}

/** The newest audit entry about `target` with `action` (the operator audit object's erasure records). */
