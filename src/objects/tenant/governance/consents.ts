/**
 * Privacy receipts: one per (provider endpoint, model, provider policyVersion). A consent
 * must name what the tenant policy currently configures — the endpoint, one of its models and its
 * current policyVersion — so a receipt is always for the terms actually in force. When an endpoint's
 * policyVersion changes, its old receipts stop matching and the gate asks again.
 */
import { and, eq } from "drizzle-orm";
import { H } from "../../../core/ids/hash";
import * as schema from "../../../db/tenant-schema";
import type { Policy } from "../../../schema/admin/policy";
import type { CreateConsentBody, ProviderConsent } from "../../../schema/admin/providers";
import { nowIso } from "../../shared/sqlite";
import type { FieldFailure } from "./policy-store";
import type { TenantDb } from "../types";
import { pageByCreated } from "../../shared/keyset";

type Row = typeof schema.providerConsents.$inferSelect;

export type ConsentRecording = { ok: true; consent: ProviderConsent; created: boolean } | FieldFailure;

export class ProviderConsents {
  constructor(private readonly db: TenantDb) {}

  /** Idempotent: repeating a consent answers the first receipt. */
  record(actor: string, body: CreateConsentBody, policy: Policy): ConsentRecording {
    const endpoint = policy.providers.find((candidate) => candidate.id === body.provider);
    if (!endpoint) return refuse("provider", `no provider endpoint '${body.provider}' is configured in the tenant policy (PUT /v1/policy first)`);
    if (!endpoint.models.includes(body.model)) return refuse("model", `endpoint '${endpoint.id}' does not allow model '${body.model}' (allowed: ${endpoint.models.join(", ")})`);
    if (body.policyVersion !== endpoint.policyVersion) {
      return refuse("policyVersion", `endpoint '${endpoint.id}' is configured with policyVersion '${endpoint.policyVersion}'; a consent must name that version, not '${body.policyVersion}'`);
    }
    const existing = this.find(body.provider, body.model, body.policyVersion);
    if (existing) return { ok: true, consent: toRecord(existing), created: false };
    const row: Row = { id: `pc_${H(body.provider, body.model, body.policyVersion).slice(0, 20)}`, ...body, actor, createdAt: nowIso() };
    this.db.insert(schema.providerConsents).values(row).run();
    return { ok: true, consent: toRecord(row), created: true };
  }

  has(provider: string, model: string, policyVersion: string): boolean {
    return this.find(provider, model, policyVersion) !== undefined;
  }

  page(limit: number, after?: { c: string; i: string }): { data: ProviderConsent[]; last: { c: string; i: string } | null } {
    return pageByCreated(this.db, schema.providerConsents, limit, after, toRecord);
  }

  private find(provider: string, model: string, policyVersion: string): Row | undefined {
    const t = schema.providerConsents;
    return this.db.select().from(t).where(and(eq(t.provider, provider), eq(t.model, model), eq(t.policyVersion, policyVersion))).get();
  }
}

function toRecord(row: Row): ProviderConsent {
  return { id: row.id, provider: row.provider, model: row.model, policyVersion: row.policyVersion, consentedBy: row.actor, createdAt: row.createdAt };
}

function refuse(path: string, message: string): FieldFailure {
  return { ok: false, code: "validation_failed", message, fields: [{ path, message }] };
}
