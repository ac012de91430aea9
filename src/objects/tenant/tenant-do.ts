import { DurableObject } from "cloudflare:workers";
import { desc, lt } from "drizzle-orm";
import { z } from "zod";
import { config, rateLimitsFrom, type RateLimits, type Scope } from "../../config";
import { rateLimitKeys } from "../../core/rate-limit";
import * as schema from "../../db/tenant-schema";
import type { Env } from "../../env";
import { failure, type Result } from "../../http/error-codes";
import migrations from "../../../migrations/tenant";
import type { Agent } from "../../schema/agents";
import type { ApiKeyInfo, Tenant } from "../../schema/auth";
import { decodeCursor, encodeCursor, type Page } from "../../schema/common";
import { consumeCounter } from "../counters";
import { nowIso, openDatabase } from "../sqlite";
import { AgentDirectory } from "./directory";
import { IdempotencyStore, type IdempotencyBegin } from "./idempotency";
import { ApiKeys } from "./keys";
import { NotificationLog } from "./notification-log";
import type { TenantDb } from "./types";

export type AuthOutcome =
  | { ok: true; keyId: string; scopes: Scope[] }
  | { ok: false; code: "unauthorized"; message: string }
  | { ok: false; code: "rate_limited"; message: string; retryAfterSeconds: number };

export interface AuditEntry {
  seq: number;
  at: string;
  actor: string;
  action: string;
  target: string | null;
  detail: Record<string, unknown>;
}

/** One tenant: its keys, agent directory, idempotency records and audit log. */
export class TenantDO extends DurableObject<Env> {
  private readonly db: TenantDb;
  private readonly keys: ApiKeys;
  private readonly directory: AgentDirectory;
  private readonly idempotencyStore: IdempotencyStore;
  private readonly limits: RateLimits;
  /** Change provenance shared by every writer (journal, events, webhooks, agent notifications). */
  private readonly notifications: NotificationLog;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = openDatabase(ctx, schema, migrations);
    this.keys = new ApiKeys(this.db);
    this.directory = new AgentDirectory(this.db);
    this.idempotencyStore = new IdempotencyStore(this.db);
    this.limits = rateLimitsFrom(env.VIGIL_RATE_LIMITS);
    this.notifications = new NotificationLog(this.db, () => this.getTenant()?.id ?? "tenant");
  }

  initTenant(id: string, name: string, timeZone: string): Result<{ tenant: Tenant; apiKey: string }> {
    if (this.getTenant()) return failure("conflict", "tenant already exists");
    const tenant: Tenant = { id, name, timeZone, createdAt: nowIso() };
    const created = this.db.transaction((tx) => {
      tx.insert(schema.tenant).values(tenant).run();
      return new ApiKeys(tx as unknown as TenantDb).create(id, "initial", [...config.defaultScopes]);
    });
    this.audit("operator", "tenant.created", id, { name });
    this.audit("operator", "key.created", created.id, { scopes: created.scopes });
    return { ok: true, tenant, apiKey: created.key };
  }

  getTenant(): Tenant | null {
    return this.db.select().from(schema.tenant).get() ?? null;
  }

  /** Resolves an API key hash and charges the key's request budget in one step. */
  authenticate(keyHash: string): AuthOutcome {
    const key = this.getTenant() ? this.keys.findActive(keyHash) : null;
    if (!key) return { ok: false, code: "unauthorized", message: "the API key is not valid or was revoked" };
    const limit = consumeCounter(this.db, rateLimitKeys.client(key.id), this.limits.requestsPerMinutePerKey, 60_000);
    if (!limit.allowed) {
      return { ok: false, code: "rate_limited", message: `at most ${this.limits.requestsPerMinutePerKey} requests per minute per key`, retryAfterSeconds: limit.retryAfterSeconds };
    }
    return { ok: true, keyId: key.id, scopes: key.scopes };
  }

  /** Rate limit for JWT principals (per subject), same budget as a key. */
  chargeClient(clientId: string): AuthOutcome {
    if (!this.getTenant()) return { ok: false, code: "unauthorized", message: "unknown tenant" };
    const limit = consumeCounter(this.db, rateLimitKeys.client(clientId), this.limits.requestsPerMinutePerKey, 60_000);
    if (!limit.allowed) return { ok: false, code: "rate_limited", message: "too many requests", retryAfterSeconds: limit.retryAfterSeconds };
    return { ok: true, keyId: clientId, scopes: [] };
  }

  createKey(actor: string, name: string | null, scopes: Scope[]): { id: string; key: string; scopes: Scope[] } {
    const created = this.keys.create(this.getTenant()!.id, name, scopes);
    this.audit(actor, "key.created", created.id, { scopes });
    return created;
  }

  listKeys(): ApiKeyInfo[] {
    return this.keys.list();
  }

  revokeKey(actor: string, id: string): Result<{ key: ApiKeyInfo }> {
    const key = this.keys.revoke(id);
    if (!key) return failure("not_found", "key not found");
    this.audit(actor, "key.revoked", id, {});
    return { ok: true, key };
  }

  upsertAgentDirectory(agent: Agent, parentId: string | null = null): void {
    this.directory.upsert(agent, parentId);
  }

  listAgents(query: { limit: number; cursor?: string | undefined; includeChildren: boolean }): Result<Page<Agent>> {
    const after = decodeCursor(query.cursor, z.object({ c: z.string(), i: z.string() }));
    if (query.cursor && !after) return failure("validation_failed", "cursor is not valid");
    const page = this.directory.list(query.limit, after, query.includeChildren);
    return { ok: true, data: page.data, nextCursor: page.last ? encodeCursor(page.last) : null };
  }

  hasAgent(agentId: string): boolean {
    return this.directory.has(agentId);
  }

  idempotencyBegin(scope: string, key: string, requestHash: string): IdempotencyBegin {
    return this.idempotencyStore.begin(scope, key, requestHash);
  }

  idempotencyComplete(scope: string, key: string, status: number, body: string): void {
    this.idempotencyStore.complete(scope, key, status, body);
  }

  idempotencyAbort(scope: string, key: string): void {
    this.idempotencyStore.abort(scope, key);
  }

  /**
   * Matches recorded, undispatched notification batches against the subscription index and queues
   * one wake per match. Every writer that records a batch calls this after its transaction commits.
   */
  private async dispatchPending(): Promise<void> {
    // The subscription dispatcher (src/objects/tenant/dispatcher.ts) plugs in here.
  }

  audit(actor: string, action: string, target: string | null, detail: Record<string, unknown>): void {
    this.db.insert(schema.audit).values({ at: nowIso(), actor, action, target, detail }).run();
  }

  listAudit(limit: number, beforeSeq?: number): AuditEntry[] {
    return this.db
      .select()
      .from(schema.audit)
      .where(beforeSeq === undefined ? undefined : lt(schema.audit.seq, beforeSeq))
      .orderBy(desc(schema.audit.seq))
      .limit(limit)
      .all();
  }
}
