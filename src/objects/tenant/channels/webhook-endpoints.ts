import type { KeySource } from "../../../core/egress/keyring";
import { count, eq, isNull } from "drizzle-orm";
import { config } from "../../../config";
import type { DeploymentMode } from "../../../core/egress/deployment-mode";
import { checkUrlShape } from "../../../core/egress/egress";
import { canonicalJson, H } from "../../../core/ids/hash";
import { createSecretBox, SECRET_PURPOSES, type SecretBox } from "../../../core/egress/secret-box";
import * as schema from "../../../db/tenant-schema";
import { failure, type Result } from "../../../core/runtime/result";
import { randomId, randomSecret } from "../../../ids";
import type { CreateWebhookBody, WebhookEndpoint } from "../../../schema/admin/outbound-webhooks";
import { nowIso } from "../../shared/sqlite";
import type { TenantDb } from "../types";
import { pageByCreated } from "../../shared/keyset";

type Row = typeof schema.webhookEndpoints.$inferSelect;

export type EndpointCreation = Result<{ endpoint: WebhookEndpoint; secret: string; created: boolean }>;

/** What the queue consumer needs for one attempt; the secret stays in memory only. */
export interface EndpointTarget {
  id: string;
  url: string;
  secret: string;
}

/**
 * The tenant's outbound webhook endpoints. The signing secret is sealed with secret-box
 * (AES-256-GCM, bound to the endpoint id) and appears in the creation answer only. URLs must be
 * https to public hosts when deployed; under `npm start` (local mode) also plain http to loopback and
 * private addresses (src/core/egress/egress.ts).
 */
export class WebhookEndpoints {
  private readonly box: SecretBox;
  /**
   * The live endpoints the matcher reads on every event batch. Exact: `create` and `delete`
   * are the only writers of webhook_endpoints, and both drop it after their write; a tenant erasure, which
   * deletes every table, drops it through `forgetCached`.
   */
  private activeCache: WebhookEndpoint[] | undefined;

  constructor(
    private readonly db: TenantDb,
    masterKey: KeySource,
    private readonly mode: DeploymentMode,
  ) {
    this.box = createSecretBox(masterKey, SECRET_PURPOSES.outboundWebhookSecret);
  }

  /** With an Idempotency-Key the id is derived from the key, so a replay answers the original endpoint and secret. */
  async create(body: CreateWebhookBody, requestKey?: string): Promise<EndpointCreation> {
    const shape = checkUrlShape(body.url, this.mode);
    if (!shape.ok) return failure("validation_failed", `url: ${shape.message}`);
    const eventTypes = [...new Set(body.eventTypes)];
    const description = body.description ?? null;
    const id = `we_${requestKey === undefined ? randomId("", 24) : H("webhook.create", requestKey).slice(0, 24)}`;
    if (requestKey !== undefined) {
      const existing = this.row(id);
      if (existing) return this.replay(existing, { url: body.url, eventTypes, description });
    }
    const active = this.db.select({ n: count() }).from(schema.webhookEndpoints).where(isNull(schema.webhookEndpoints.deletedAt)).get()?.n ?? 0;
    if (active >= config.outboundWebhooks.maxPerTenant) return failure("conflict", `a tenant may hold at most ${config.outboundWebhooks.maxPerTenant} webhook endpoints`);
    const secret = `whsec_${randomSecret(32)}`;
    const secretCiphertext = await this.box.seal(secret, id);
    const inserted = this.db
      .insert(schema.webhookEndpoints)
      .values({ id, url: body.url, eventTypes, description, secretCiphertext, createdAt: nowIso() })
      .onConflictDoNothing()
      .returning({ id: schema.webhookEndpoints.id })
      .all();
    this.activeCache = undefined;
    if (inserted.length === 0) return this.replay(this.row(id)!, { url: body.url, eventTypes, description });
    return { ok: true, endpoint: toEndpoint(this.row(id)!), secret, created: true };
  }

  list(limit: number, after: { c: string; i: string } | undefined): { data: WebhookEndpoint[]; last: { c: string; i: string } | null } {
    return pageByCreated(this.db, schema.webhookEndpoints, limit, after, toEndpoint, [isNull(schema.webhookEndpoints.deletedAt)]);
  }

  get(id: string): WebhookEndpoint | null {
    const row = this.row(id);
    return row && !row.deletedAt ? toEndpoint(row) : null;
  }

  /** Every live endpoint (the matcher reads them per event batch; a tenant holds at most maxPerTenant). */
  active(): WebhookEndpoint[] {
    this.activeCache ??= this.db.select().from(schema.webhookEndpoints).where(isNull(schema.webhookEndpoints.deletedAt)).all().map(toEndpoint);
    return this.activeCache;
  }

  /** Drops the cached live endpoints (the tables were rewritten underneath: tenant erasure). */
  forgetCached(): void {
    this.activeCache = undefined;
  }

  /** Soft delete: pending deliveries settle as dead on their next attempt, and the sealed secret is wiped. */
  delete(id: string): WebhookEndpoint | null {
    const row = this.row(id);
    if (!row || row.deletedAt) return null;
    this.db.update(schema.webhookEndpoints).set({ deletedAt: nowIso(), secretCiphertext: "" }).where(eq(schema.webhookEndpoints.id, id)).run();
    this.activeCache = undefined;
    return toEndpoint(row);
  }

  /** The live endpoint's URL and opened secret, or why it cannot be delivered to. */
  async target(id: string): Promise<Result<{ target: EndpointTarget }>> {
    const row = this.row(id);
    if (!row || row.deletedAt) return failure("not_found", "endpoint_deleted");
    const opened = await this.box.open(row.secretCiphertext, row.id);
    if (!opened.ok) return failure("secret_unavailable", "secret_unreadable");
    return { ok: true, target: { id: row.id, url: row.url, secret: opened.secret } };
  }

  private async replay(row: Row, request: { url: string; eventTypes: string[]; description: string | null }): Promise<EndpointCreation> {
    const conflict = failure("idempotency_conflict", "this Idempotency-Key already created a different webhook endpoint");
    if (row.deletedAt) return failure("idempotency_conflict", "the webhook endpoint created with this Idempotency-Key was deleted");
    if (Date.now() - Date.parse(row.createdAt) > config.idempotency.retentionHours * 3_600_000) return conflict;
    const same = row.url === request.url && row.description === request.description && canonicalJson(row.eventTypes) === canonicalJson(request.eventTypes);
    if (!same) return conflict;
    const opened = await this.box.open(row.secretCiphertext, row.id);
    if (!opened.ok) return conflict;
    return { ok: true, endpoint: toEndpoint(row), secret: opened.secret, created: false };
  }

  private row(id: string): Row | undefined {
    return this.db.select().from(schema.webhookEndpoints).where(eq(schema.webhookEndpoints.id, id)).get();
  }
}

function toEndpoint(row: Row): WebhookEndpoint {
  return { id: row.id, url: row.url, eventTypes: row.eventTypes, description: row.description, createdAt: row.createdAt };
}
