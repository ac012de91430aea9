import type { KeySource } from "../../../core/egress/keyring";
import { and, eq, isNull } from "drizzle-orm";
import { config } from "../../../config";
import { changeUnits } from "../../../core/wakes/change-units";
import { canonicalJson, H } from "../../../core/ids/hash";
import { createSecretBox, SECRET_PURPOSES, type SecretBox } from "../../../core/egress/secret-box";
import { mapDeliveryTokens, parseInboundBody, sourceDeliveryId, tokenMappingSchema, type TokenMapping } from "../../../core/wakes/webhook-mapping";
import { verifyWebhookSignature, type WebhookSignatureScheme } from "../../../core/egress/webhook-signature";
import * as schema from "../../../db/tenant-schema";
import { failure, type Result } from "../../../core/runtime/result";
import { randomId, randomSecret } from "../../../ids";
import type { CreateWebhookSourceBody, SourceDelivery, WebhookSourceRecord } from "../../../schema/agents/webhooks";
import { nowIso } from "../../shared/sqlite";
import type { NotificationLog } from "./notification-log";
import type { TenantDb } from "../types";
import { pageByCreated } from "../../shared/keyset";

type Row = typeof schema.webhookSources.$inferSelect;

export type SourceCreation = Result<{ source: WebhookSourceRecord; secret: string; created: boolean }>;
export type SourceIngest = Result<{ logicalChangeKey: string; duplicate: boolean }>;

/** `ws_<tenantId>_<20 chars>`: names its tenant so ingress reaches the right TenantDO (like API keys). */
const SOURCE_ID = /^ws_(t[0-9a-z]{16})_[0-9a-z]{20}$/;

export function tenantIdOfSourceId(sourceId: string): string | null {
  return SOURCE_ID.exec(sourceId)?.[1] ?? null;
}

const NOT_VERIFIED = "the delivery's signature could not be verified";

/**
 * The tenant's signed webhook sources. The signing secret is sealed with secret-box (AES-256-GCM,
 * bound to the source id) and leaves this class only in the creation answer. Ingress verifies the
 * raw bytes before anything is parsed, then records the delivery, its change unit and its
 * notification batch in one transaction, deduplicated by `(webhook:<sourceId>, deliveryId)`.
 */
export class WebhookSources {
  private readonly box: SecretBox;

  constructor(
    private readonly db: TenantDb,
    private readonly notifications: NotificationLog,
    masterKey: KeySource,
    private readonly tenantId: () => string,
  ) {
    this.box = createSecretBox(masterKey, SECRET_PURPOSES.webhookSourceSecret);
  }

  /**
   * Creates a source. With an Idempotency-Key the id is derived from the key: the same request again
   * answers the original source (and its secret, as the same response); a different one is a 409.
   */
  async create(body: CreateWebhookSourceBody, requestKey?: string): Promise<SourceCreation> {
    const parsed = tokenMappingSchema.safeParse(body.tokenMapping);
    if (!parsed.success) return failure("validation_failed", parsed.error.issues.map((issue) => issue.message).join("; "));
    const tokenMapping = parsed.data;
    const suffix = requestKey === undefined ? randomId("", 20) : H("webhook-source.create", requestKey).slice(0, 20);
    const id = `ws_${this.tenantId()}_${suffix}`;
    if (requestKey !== undefined) {
      const existing = this.row(id);
      if (existing) return this.replay(existing, { ...body, tokenMapping });
    }
    const secret = body.secret ?? `whsec_${randomSecret(32)}`;
    const secretCiphertext = await this.box.seal(secret, id);
    const row = { id, name: body.name, scheme: body.scheme, secretCiphertext, tokenMapping: tokenMapping as unknown as Record<string, unknown>, createdAt: nowIso() };
    const inserted = this.db.insert(schema.webhookSources).values(row).onConflictDoNothing().returning({ id: schema.webhookSources.id }).all();
    // Lost a race with the same Idempotency-Key: answer as its replay.
    if (inserted.length === 0) return this.replay(this.row(id)!, { ...body, tokenMapping });
    return { ok: true, source: toRecord(this.row(id)!), secret, created: true };
  }

  /** Oldest first, keyset-paginated on (createdAt, id); deleted sources are gone from the list. */
  list(limit: number, after: { c: string; i: string } | undefined): { data: WebhookSourceRecord[]; last: { c: string; i: string } | null } {
    return pageByCreated(this.db, schema.webhookSources, limit, after, toRecord, [isNull(schema.webhookSources.deletedAt)]);
  }

  get(id: string): WebhookSourceRecord | null {
    const row = this.row(id);
    return row && !row.deletedAt ? toRecord(row) : null;
  }

  /** Soft delete: the id never verifies again, and the sealed secret is overwritten. */
  delete(id: string): WebhookSourceRecord | null {
    const row = this.row(id);
    if (!row || row.deletedAt) return null;
    this.db.update(schema.webhookSources).set({ deletedAt: nowIso(), secretCiphertext: "" }).where(eq(schema.webhookSources.id, id)).run();
    return toRecord(row);
  }

  /** Verify (raw bytes, replay window) → parse → map → record once. Nothing is written on any failure. */
  async receive(delivery: SourceDelivery): Promise<SourceIngest> {
    const row = this.row(delivery.sourceId);
    if (!row || row.deletedAt) return failure("signature_invalid", NOT_VERIFIED);
    if (delivery.rawBody === null) return failure("payload_too_large", "the delivery body is too large to verify");
    const opened = await this.box.open(row.secretCiphertext, row.id);
    if (!opened.ok) {
      console.error(JSON.stringify({ level: "error", msg: "webhook source secret unreadable", sourceId: row.id, code: opened.code }));
      return failure("internal_error", "this source's secret cannot be read (was VIGIL_MASTER_KEY changed?); recreate the source");
    }
    const headers = new Headers(delivery.headers);
    const scheme = row.scheme as WebhookSignatureScheme;
    const verified = await verifyWebhookSignature({ scheme, headers, rawBody: delivery.rawBody, secrets: opened.secret, nowMs: delivery.nowMs });
    if (!verified.ok) return failure(verified.code === "timestamp_stale" ? "timestamp_stale" : "signature_invalid", verified.message);

    const body = parseInboundBody(delivery.rawBody, headers.get("content-type"));
    const deliveryId = sourceDeliveryId(scheme, headers, body, delivery.rawBody);
    if (!deliveryId.ok) return failure("validation_failed", deliveryId.message);
    const mapping = tokenMappingSchema.safeParse(row.tokenMapping);
    if (!mapping.success) return failure("internal_error", "this source's token mapping is corrupt; recreate the source");
    const tokens = mapDeliveryTokens(mapping.data, { headers, body });

    const source = `webhook:${row.id}`;
    return this.db.transaction((tx): SourceIngest => {
      const d = schema.inboundDeliveries;
      const known = tx.select({ key: d.logicalChangeKey }).from(d).where(and(eq(d.source, source), eq(d.deliveryId, deliveryId.deliveryId))).get();
      if (known) return { ok: true, logicalChangeKey: known.key, duplicate: true };
      // Deleted while the signature was being checked: the delivery is refused like any unknown source.
      const live = tx.select({ deletedAt: schema.webhookSources.deletedAt }).from(schema.webhookSources).where(eq(schema.webhookSources.id, row.id)).get();
      if (!live || live.deletedAt) return failure("signature_invalid", NOT_VERIFIED);
      const recorded = this.notifications.recordExternal(tx as unknown as TenantDb, changeUnits.webhook(row.id, deliveryId.deliveryId), tokens, {
        source,
        authority: "external_evidence",
        payload: { sourceId: row.id, deliveryId: deliveryId.deliveryId, body },
      });
      tx.insert(d).values({ source, deliveryId: deliveryId.deliveryId, logicalChangeKey: recorded.batch.logicalChangeKey, receivedAt: nowIso() }).run();
      return { ok: true, logicalChangeKey: recorded.batch.logicalChangeKey, duplicate: false };
    });
  }

  private async replay(row: Row, request: { name: string; scheme: string; secret?: string | undefined; tokenMapping: TokenMapping }): Promise<SourceCreation> {
    const conflict = failure("idempotency_conflict", "this Idempotency-Key already created a different webhook source");
    if (row.deletedAt) return failure("idempotency_conflict", "the webhook source created with this Idempotency-Key was deleted");
    // Replays (which repeat the secret) last as long as any Idempotency-Key record does.
    if (Date.now() - Date.parse(row.createdAt) > config.idempotency.retentionHours * 3_600_000) return conflict;
    const same = row.name === request.name && row.scheme === request.scheme && canonicalJson(row.tokenMapping) === canonicalJson(request.tokenMapping);
    if (!same) return conflict;
    const opened = await this.box.open(row.secretCiphertext, row.id);
    if (!opened.ok) return conflict;
    if (request.secret !== undefined && request.secret !== opened.secret) return conflict;
    return { ok: true, source: toRecord(row), secret: opened.secret, created: false };
  }

  private row(id: string): Row | undefined {
    return this.db.select().from(schema.webhookSources).where(eq(schema.webhookSources.id, id)).get();
  }
}

function toRecord(row: Row): WebhookSourceRecord {
  return { id: row.id, name: row.name, scheme: row.scheme as WebhookSignatureScheme, tokenMapping: row.tokenMapping as unknown as TokenMapping, createdAt: row.createdAt };
}
