import type { KeySource } from "../../../core/egress/keyring";
/**
 * Provider API keys: sealed with secret-box under the `providerSecret` purpose
 * and bound to their row id, referenced from policy endpoints by `secretRefId`. The plaintext
 * exists only in the create request and in an inference grant handed to the tenant's own agent;
 * nothing here returns, logs or hashes it. Revoking wipes the ciphertext, so a revoked key cannot
 * come back.
 */
import { and, eq, isNull } from "drizzle-orm";
import { config } from "../../../config";
import { H } from "../../../core/ids/hash";
import { createSecretBox, SECRET_PURPOSES, type SecretBox } from "../../../core/egress/secret-box";
import * as schema from "../../../db/tenant-schema";
import { failure, type Result } from "../../../core/runtime/result";
import { randomId } from "../../../ids";
import type { CreateProviderSecretBody, ProviderSecret } from "../../../schema/admin/providers";
import { nowIso } from "../../shared/sqlite";
import type { TenantDb } from "../types";
import { pageByCreated } from "../../shared/keyset";

type Row = typeof schema.providerSecrets.$inferSelect;

export type SecretCreation = Result<{ secret: ProviderSecret; created: boolean }>;
export type SecretOpening = { ok: true; apiKey: string } | { ok: false; code: "secret_unavailable"; message: string };

export class ProviderSecrets {
  private readonly box: SecretBox;

  constructor(
    private readonly db: TenantDb,
    masterKey: KeySource,
  ) {
    this.box = createSecretBox(masterKey, SECRET_PURPOSES.providerSecret);
  }

  /**
   * With an Idempotency-Key the id derives from it (no request hash of the key is ever stored):
   * the same request answers the original secret's metadata, any other is a 409.
   */
  async create(body: CreateProviderSecretBody, requestKey?: string): Promise<SecretCreation> {
    const id = requestKey === undefined ? randomId("ps_") : `ps_${H("provider-secret.create", requestKey).slice(0, 20)}`;
    const existing = requestKey === undefined ? undefined : this.row(id);
    if (existing) return this.replay(existing, body);
    const ciphertext = await this.box.seal(body.apiKey, id);
    // Checked after the await: a concurrent request with the same key may have stored it meanwhile.
    const raced = requestKey === undefined ? undefined : this.row(id);
    if (raced) return this.replay(raced, body);
    const row: Row = { id, provider: body.provider, name: body.name ?? null, ciphertext, createdAt: nowIso(), revokedAt: null };
    this.db.insert(schema.providerSecrets).values(row).run();
    return { ok: true, secret: toRecord(row), created: true };
  }

  /** Oldest first, revoked ones included (with `revokedAt`). */
  page(limit: number, after?: { c: string; i: string }): { data: ProviderSecret[]; last: { c: string; i: string } | null } {
    return pageByCreated(this.db, schema.providerSecrets, limit, after, toRecord);
  }

  /** Revokes once; a second revoke of the same id answers not_found like an unknown id would. */
  revoke(id: string): ProviderSecret | null {
    const row = this.row(id);
    if (!row || row.revokedAt) return null;
    const revokedAt = nowIso();
    this.db.update(schema.providerSecrets).set({ revokedAt, ciphertext: "" }).where(eq(schema.providerSecrets.id, id)).run();
    return toRecord({ ...row, revokedAt });
  }

  /** The plaintext key for an endpoint's secretRefId, only if it was stored for that endpoint and is live. */
  async open(id: string, provider: string): Promise<SecretOpening> {
    const row = this.row(id);
    if (!row) return unavailable(`provider secret ${id} does not exist`);
    if (row.revokedAt) return unavailable(`provider secret ${id} was revoked; store a new one and update the policy`);
    if (row.provider !== provider) return unavailable(`provider secret ${id} belongs to provider '${row.provider}', not '${provider}'`);
    const opened = await this.box.open(row.ciphertext, row.id);
    if (!opened.ok) return unavailable(`provider secret ${id} cannot be decrypted (sealed under a master key no longer in VIGIL_MASTER_KEY or VIGIL_MASTER_KEY_PREVIOUS); store it again`);
    if (!opened.current) await this.reseal(row, opened.secret);
    return { ok: true, apiKey: opened.secret };
  }

  /**
   * Up to `limit` live secrets still sealed under a previous key are sealed again under the current one (the
   * keyring's background pass); returns how many were re-sealed and how many remain.
   */
  async resealStale(limit: number): Promise<{ resealed: number; remaining: number }> {
    const stale = this.db.select().from(schema.providerSecrets).where(isNull(schema.providerSecrets.revokedAt)).all().filter((row) => !this.box.isCurrent(row.ciphertext));
    let resealed = 0;
    for (const row of stale.slice(0, limit)) {
      const opened = await this.box.open(row.ciphertext, row.id);
      if (opened.ok && (await this.reseal(row, opened.secret))) resealed++;
    }
    return { resealed, remaining: stale.length - resealed };
  }

  /** Writes the value sealed under the current key, unless the row changed meanwhile (compare-and-set). */
  private async reseal(row: Row, secret: string): Promise<boolean> {
    const ciphertext = await this.box.seal(secret, row.id);
    const t = schema.providerSecrets;
    return this.db.update(t).set({ ciphertext }).where(and(eq(t.id, row.id), eq(t.ciphertext, row.ciphertext))).returning({ id: t.id }).all().length === 1;
  }

  private async replay(row: Row, body: CreateProviderSecretBody): Promise<SecretCreation> {
    const conflict = failure("idempotency_conflict", "this Idempotency-Key already stored a different provider secret");
    if (row.revokedAt) return failure("idempotency_conflict", "the provider secret stored with this Idempotency-Key was revoked");
    if (Date.now() - Date.parse(row.createdAt) > config.idempotency.retentionHours * 3_600_000) return conflict;
    if (row.provider !== body.provider || row.name !== (body.name ?? null)) return conflict;
    const opened = await this.box.open(row.ciphertext, row.id);
    return opened.ok && opened.secret === body.apiKey ? { ok: true, secret: toRecord(row), created: false } : conflict;
  }

  private row(id: string): Row | undefined {
    return this.db.select().from(schema.providerSecrets).where(eq(schema.providerSecrets.id, id)).get();
  }
}

function toRecord(row: Row): ProviderSecret {
  return { id: row.id, provider: row.provider, name: row.name, createdAt: row.createdAt, revokedAt: row.revokedAt };
}

const unavailable = (message: string): SecretOpening => ({ ok: false, code: "secret_unavailable", message });
