import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import { config } from "../../../config";
import { failure, type Result } from "../../../core/runtime/result";
import type { Migrations } from "../../shared/sqlite";
import { inBackground, logFailure } from "../../shared/background";
import type { AgentProfile } from "./profile";
import type { AgentDb } from "../types";
import { logEvent } from "../../../log";

/** The Agents SDK schedule callback that erases a destroyed agent once its soft-delete window has passed. */
export const ERASURE_CALLBACK = "onErasureDue";

/** A due erasure that failed (e.g. the tenant was unreachable) is tried again this much later. */
const ERASURE_RETRY_MS = 3_600_000;

export type ErasureReason = "soft_delete_elapsed" | "tenant_erased" | "forced";

export interface ErasureReceipt {
  agentId: string;
  tenantId: string;
  reason: ErasureReason;
  erasedAt: string;
  /** Row counts per table at the moment of erasure (what was deleted; no content). */
  rows: Record<string, number>;
}

export interface ErasureDeps {
  ctx: DurableObjectState;
  db: AgentDb;
  migrations: Migrations;
  profile: AgentProfile;
  tenantId(): string;
  /** The tenant forgets the agent (directory, subscriptions, triggers, …) and writes the audit entry. */
  reportErased(receipt: ErasureReceipt): Promise<void>;
  schedule(when: Date, callback: typeof ERASURE_CALLBACK): Promise<unknown>;
  /** Every row is gone: what the parts keep in memory of their rows (the profile, the report, the watchdog…) is dropped. */
  forgetRows?(): void;
}

/**
 * Erasure: a destroyed agent keeps its soft-deleted history for
 * `config.erasure.softDeleteSeconds`, then every row of its SQLite is deleted (`deleteAll`, after the
 * alarm is cancelled) and the tenant drops its directory entry and agent-linked rows and audits it.
 */
export class AgentErasure {
  constructor(private readonly deps: ErasureDeps) {}

  /** When the destroyed agent becomes erasable (epoch ms), or null if it is not destroyed. */
  dueAt(): number | null {
    const agent = this.deps.profile.get();
    if (!agent || agent.lifecycle !== "destroyed") return null;
    const destroyedAt = this.destroyedAt();
    return destroyedAt === null ? null : destroyedAt + config.erasure.softDeleteSeconds * 1000;
  }

  private destroyedAt(): number | null {
    const row = this.deps.ctx.storage.sql.exec<{ destroyed_at: string | null }>("SELECT destroyed_at FROM agent_meta LIMIT 1").toArray()[0];
    return row?.destroyed_at ? Date.parse(row.destroyed_at) : null;
  }

  /** Arms the erasure at the end of the soft-delete window (a persisted schedule: survives restarts). */
  async scheduleAfterDestroy(): Promise<void> {
    const due = this.dueAt();
    if (due !== null) await this.deps.schedule(new Date(due), ERASURE_CALLBACK);
  }

  /** The `onErasureDue` callback: runs after the SDK has settled its schedule row, since erasure deletes that table too. */
  eraseWhenDueInBackground(): void {
    inBackground((work) => this.deps.ctx.waitUntil(work), () => this.eraseIfDue(), (error) => logFailure("erasure failed", error));
  }

  /** Erases now if the window has passed (or `force`); otherwise re-arms for the due time. */
  async eraseIfDue(force = false, nowMs = Date.now()): Promise<Result<{ receipt: ErasureReceipt | null }>> {
    const due = this.dueAt();
    if (due === null) return failure("not_found", "agent not found or not destroyed");
    if (!force && due > nowMs) {
      await this.deps.schedule(new Date(due), ERASURE_CALLBACK);
      return { ok: true, receipt: null };
    }
    try {
      return await this.erase(force ? "forced" : "soft_delete_elapsed");
    } catch (error) {
      // Nothing was deleted yet (the tenant is told first): arm another attempt so the erasure is not lost.
      await this.deps.schedule(new Date(nowMs + ERASURE_RETRY_MS), ERASURE_CALLBACK);
      throw error;
    }
  }

  /**
   * Deletes everything. For a single agent the tenant is told first (so a failure leaves the agent
   * intact and retryable); in a tenant erasure the tenant is about to be deleted whole.
   */
  async erase(reason: ErasureReason): Promise<Result<{ receipt: ErasureReceipt }>> {
    const agent = this.deps.profile.get();
    if (!agent) return failure("not_found", "agent not found");
    const receipt: ErasureReceipt = { agentId: agent.id, tenantId: this.deps.tenantId(), reason, erasedAt: new Date().toISOString(), rows: this.rowCounts() };
    if (reason !== "tenant_erased") await this.deps.reportErased(receipt);
    const storage = this.deps.ctx.storage;
    const sdkSchema = this.sdkSchema();
    await storage.deleteAlarm();
    await storage.deleteAll();
    this.restoreSdkSchema(sdkSchema);
    this.deps.forgetRows?.();
    // The object stays addressable: an empty schema makes every later call answer not_found.
    await migrate(this.deps.db, this.deps.migrations);
    logEvent("info", "agent erased", { tenantId: receipt.tenantId, agentId: receipt.agentId, reason });
    return { ok: true, receipt };
  }

  /**
   * The Agents SDK's own tables (`cf_*`) as it created them, tables before their indexes. The SDK creates them once per
   * object start and remembers that it did, so after `deleteAll` a live object (an agent created again in it) would
   * fail every schedule call with "no such table" until it restarted. They are created again empty from their own DDL.
   */
  private sdkSchema(): string[] {
    return this.deps.ctx.storage.sql
      .exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name LIKE 'cf\\_%' ESCAPE '\\' AND sql IS NOT NULL ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END")
      .toArray()
      .map((row) => row.sql);
  }

  private restoreSdkSchema(statements: readonly string[]): void {
    for (const statement of statements) {
      try {
        this.deps.ctx.storage.sql.exec(statement);
      } catch (error) {
        // The erasure itself is done; a table the SDK cannot use again shows up in its own calls, and at the next start it creates it.
        logFailure("restoring an Agents SDK table after erasure failed", error);
      }
    }
  }

  private rowCounts(): Record<string, number> {
    const sql = this.deps.ctx.storage.sql;
    const tables = sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '%fts%' ORDER BY name")
      .toArray()
      .map((row) => row.name);
    const counts: Record<string, number> = {};
    for (const table of tables) {
      const n = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM "${table.replace(/"/g, '""')}"`).toArray()[0]?.n ?? 0;
      if (n > 0) counts[table] = n;
    }
    return counts;
  }
}
