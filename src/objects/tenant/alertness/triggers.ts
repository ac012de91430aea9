import { allKeys, keyringOf, type KeySource, type MasterKey } from "../../../core/egress/keyring";
import { and, desc, eq } from "drizzle-orm";
import { changeUnitKey, changeUnits, logicalChangeKey } from "../../../core/wakes/change-units";
import { deriveTriggerToken, formatTriggerId, hashTriggerToken, triggerTokenHashMatches, triggerTokenKey, type TriggerStatus } from "../../../core/wakes/external-trigger";
import { H } from "../../../core/ids/hash";
import * as schema from "../../../db/tenant-schema";
import { failure, type Result } from "../../../core/runtime/result";
import { randomId } from "../../../ids";
import type { TriggerAction, TriggerRecord } from "../../../schema/agents/webhooks";
import { nowIso } from "../../shared/sqlite";
import type { TenantDb } from "../types";

type Row = typeof schema.agentTriggers.$inferSelect;

export type TriggerOutcome = Result<{ trigger: TriggerRecord; changed: boolean; reason?: string }>;
export type TriggerAdmission = Result<{ agentId: string; logicalChangeKey: string | null }>;

// Compared against when the trigger id is unknown, so a miss costs what a hit does.
const NO_HASH = "0".repeat(64);
const UNAUTHORIZED = "the trigger URL is not valid or was revoked";

/**
 * The agents' external triggers (holon): at most one `active` row per agent. Rotation mints a new
 * trigger id (the old row becomes `rotated`), revocation marks the row `revoked`; neither row ever
 * verifies again. The URL token is derived from the trigger id (see core/wakes/external-trigger), so
 * provisioning again re-derives the same URL while only its hash is stored.
 *
 * WebCrypto is async and a DO may interleave other calls at an `await`, so every token is derived
 * before or after the synchronous read-decide-write step, never inside it.
 */
export class ExternalTriggers {
  /** HMAC keys derived from the master keyring, one per ring key: bounded by the ring, no persisted state. */
  private readonly keys = new Map<string, Promise<CryptoKey>>();

  constructor(
    private readonly db: TenantDb,
    private readonly masterKey: KeySource,
    private readonly tenantId: () => string,
  ) {}

  async manage(agentId: string, action: TriggerAction, requestKey?: string): Promise<TriggerOutcome> {
    const admitted = this.agentAdmits(agentId);
    if (!admitted.ok) return admitted;
    if (action === "revoke") return this.revoke(agentId);
    if (action === "provision") {
      const active = this.active(agentId);
      if (active) {
        const token = await this.issuedToken(active.triggerId, active.secretHash);
        if (token !== null) return { ok: true, trigger: this.view(active, token), changed: false };
        // Issued under a master key no longer in the keyring: its URL cannot be re-derived, so replace it.
        return this.rotate(agentId, undefined, "master_key_changed", active.triggerId);
      }
    }
    return this.rotate(agentId, action === "rotate" ? requestKey : undefined, action === "rotate" ? "rotated" : "provisioned");
  }

  /**
   * Verifies a delivery's token and, when `deliveryId` is given, records the delivery (tracking only:
   * the agent's runKey dedupe is what makes duplicates harmless). Nothing is written on failure.
   */
  admitDelivery(triggerId: string, tokenHash: string, deliveryId: string | null): TriggerAdmission {
    const row = this.db.select().from(schema.agentTriggers).where(eq(schema.agentTriggers.triggerId, triggerId)).get();
    const matches = triggerTokenHashMatches(tokenHash, row?.secretHash ?? NO_HASH);
    if (!row || !matches || row.status !== "active") return failure("unauthorized", UNAUTHORIZED);
    const lifecycle = this.lifecycle(row.agentId);
    if (lifecycle === null || lifecycle === "destroyed") return failure("agent_destroyed", "the agent this trigger wakes is destroyed");
    // Ingress to a paused agent is refused with resume guidance, so the sender can retry later.
    if (lifecycle === "dormant" || lifecycle === "created") return failure("agent_dormant", "the agent is paused; resume it (POST /v1/agents/{id}/resume) and redeliver");
    if (deliveryId === null) return { ok: true, agentId: row.agentId, logicalChangeKey: null };
    const key = logicalChangeKey([changeUnitKey(changeUnits.webhook(triggerId, deliveryId))]);
    this.db
      .insert(schema.inboundDeliveries)
      .values({ source: `trigger:${triggerId}`, deliveryId, logicalChangeKey: key, receivedAt: nowIso() })
      .onConflictDoNothing()
      .run();
    return { ok: true, agentId: row.agentId, logicalChangeKey: key };
  }

  /**
   * Issues a new active trigger, retiring the current one in the same step. A rotation carrying an
   * Idempotency-Key gets an id derived from it, so a retried rotate finds its first answer instead
   * of rotating twice.
   */
  private async rotate(agentId: string, requestKey: string | undefined, reason: string, expectedActive?: string): Promise<TriggerOutcome> {
    const suffix = requestKey === undefined ? randomId("", 20) : H(agentId, "trigger.rotate", requestKey).slice(0, 20);
    const candidate = formatTriggerId(this.tenantId(), suffix);
    const token = await this.token(candidate);
    const decided = this.db.transaction((tx) => {
      const replay = requestKey === undefined ? undefined : tx.select().from(schema.agentTriggers).where(eq(schema.agentTriggers.triggerId, candidate)).get();
      if (replay) return { row: replay, changed: false };
      const active = tx.select().from(schema.agentTriggers).where(and(eq(schema.agentTriggers.agentId, agentId), eq(schema.agentTriggers.status, "active"))).get();
      // A concurrent provision got here first: its trigger is the answer, not a second one.
      if (reason === "provisioned" && active) return { row: active, changed: false };
      if (reason === "master_key_changed" && active && active.triggerId !== expectedActive) return { row: active, changed: false };
      const now = nowIso();
      tx.update(schema.agentTriggers)
        .set({ status: "rotated", rotatedAt: now })
        .where(and(eq(schema.agentTriggers.agentId, agentId), eq(schema.agentTriggers.status, "active")))
        .run();
      tx.insert(schema.agentTriggers).values({ triggerId: candidate, agentId, secretHash: hashTriggerToken(token), status: "active", createdAt: now }).run();
      return { row: tx.select().from(schema.agentTriggers).where(eq(schema.agentTriggers.triggerId, candidate)).get()!, changed: true };
    });
    const rowToken = decided.row.triggerId === candidate ? token : await this.token(decided.row.triggerId);
    return { ok: true, trigger: this.view(decided.row, rowToken), changed: decided.changed, reason };
  }

  private revoke(agentId: string): TriggerOutcome {
    const active = this.active(agentId);
    if (!active) {
      const latest = this.db.select().from(schema.agentTriggers).where(eq(schema.agentTriggers.agentId, agentId)).orderBy(desc(schema.agentTriggers.createdAt)).get();
      return latest?.status === "revoked" ? { ok: true, trigger: this.view(latest, null), changed: false } : failure("not_found", "this agent has no active trigger");
    }
    this.db.update(schema.agentTriggers).set({ status: "revoked", revokedAt: nowIso() }).where(eq(schema.agentTriggers.triggerId, active.triggerId)).run();
    return { ok: true, trigger: { triggerId: active.triggerId, agentId, status: "revoked", token: null }, changed: true, reason: "revoked" };
  }

  private active(agentId: string): Row | undefined {
    return this.db.select().from(schema.agentTriggers).where(and(eq(schema.agentTriggers.agentId, agentId), eq(schema.agentTriggers.status, "active"))).get();
  }

  private agentAdmits(agentId: string): Result<object> {
    const lifecycle = this.lifecycle(agentId);
    if (lifecycle === null) return failure("not_found", "agent not found");
    if (lifecycle === "destroyed") return failure("agent_destroyed", "the agent is destroyed");
    return { ok: true };
  }

  private lifecycle(agentId: string): string | null {
    const d = schema.agentDirectory;
    return this.db.select({ lifecycle: d.lifecycle }).from(d).where(eq(d.id, agentId)).get()?.lifecycle ?? null;
  }

  private view(row: Row, token: string | null): TriggerRecord {
    const status = row.status as TriggerStatus;
    return { triggerId: row.triggerId, agentId: row.agentId, status, token: status === "active" ? token : null };
  }

  /** A new trigger's token, under the keyring's current key. */
  private async token(triggerId: string): Promise<string> {
    return deriveTriggerToken(await this.keyFor(keyringOf(this.masterKey).current), triggerId);
  }

  /** An issued trigger's token, re-derived under whichever key of the ring issued it (null: none did). */
  private async issuedToken(triggerId: string, secretHash: string): Promise<string | null> {
    for (const key of allKeys(keyringOf(this.masterKey))) {
      const token = await deriveTriggerToken(await this.keyFor(key), triggerId);
      if (triggerTokenHashMatches(hashTriggerToken(token), secretHash)) return token;
    }
    return null;
  }

  private keyFor(key: MasterKey): Promise<CryptoKey> {
    let derived = this.keys.get(key.kid);
    if (!derived) this.keys.set(key.kid, (derived = triggerTokenKey(key.secret)));
    return derived;
  }
}
