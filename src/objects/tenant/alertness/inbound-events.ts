import { and, eq } from "drizzle-orm";
import { changeUnits } from "../../../core/wakes/change-units";
import type { TypedToken } from "../../../core/wakes/tokens";
import * as schema from "../../../db/tenant-schema";
import { failure, type Result } from "../../../core/runtime/result";
import { EVENT_PAYLOAD_MAX_BYTES, IngestEventBody } from "../../../schema/agents/subscriptions";
import { nowIso } from "../../shared/sqlite";
import type { NotificationLog } from "./notification-log";
import type { TenantDb } from "../types";

export type EventIngest = Result<{ logicalChangeKey: string; duplicate: boolean }>;

/**
 * `POST /v1/events` inside the tenant: idempotent by `(source, deliveryId)` through
 * `inbound_deliveries`. The delivery record, the change unit derived from the delivery and its
 * notification batch commit in one transaction; a repeat answers the original logicalChangeKey.
 */
export class InboundEvents {
  constructor(
    private readonly db: TenantDb,
    private readonly notifications: NotificationLog,
  ) {}

  record(input: IngestEventBody): EventIngest {
    const parsed = IngestEventBody.safeParse(input);
    if (!parsed.success) return failure("validation_failed", parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; "));
    const body = parsed.data;
    if (body.payload !== undefined && new TextEncoder().encode(JSON.stringify(body.payload)).length > EVENT_PAYLOAD_MAX_BYTES) {
      return failure("payload_too_large", `payload must be at most ${EVENT_PAYLOAD_MAX_BYTES} bytes as JSON`);
    }
    const source = `event:${body.source}`;
    const known = this.delivery(source, body.deliveryId);
    if (known) return { ok: true, logicalChangeKey: known, duplicate: true };
    const logicalChangeKey = this.db.transaction((tx) => {
      const recorded = this.notifications.recordExternal(tx as unknown as TenantDb, changeUnits.event(body.source, body.deliveryId), body.tokens as TypedToken[], {
        source,
        authority: "external_evidence",
        ...(body.payload !== undefined ? { payload: body.payload } : {}),
      });
      tx.insert(schema.inboundDeliveries).values({ source, deliveryId: body.deliveryId, logicalChangeKey: recorded.batch.logicalChangeKey, receivedAt: nowIso() }).run();
      return recorded.batch.logicalChangeKey;
    });
    return { ok: true, logicalChangeKey, duplicate: false };
  }

  private delivery(source: string, deliveryId: string): string | null {
    const d = schema.inboundDeliveries;
    return this.db.select({ key: d.logicalChangeKey }).from(d).where(and(eq(d.source, source), eq(d.deliveryId, deliveryId))).get()?.key ?? null;
  }
}
