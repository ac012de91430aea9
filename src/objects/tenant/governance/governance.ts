import type { KeySource } from "../../../core/egress/keyring";
/**
 * The tenant's governance surface behind the TenantDO's RPC methods: policy versions,
 * provider secrets, privacy receipts, the inference grant and the egress allowlist. Every change
 * and every denial lands in the audit log; no audit detail ever holds key material.
 */
import type { DeploymentMode } from "../../../core/egress/deployment-mode";
import { z } from "zod";
import { parseOtlpHeaders } from "../../../core/egress/otlp-headers";
import { endpointHosts, OTLP_SECRET_PROVIDER } from "../../../core/governance/policy-rules";
import { failure, type Result } from "../../../core/runtime/result";
import { decodeCursor, encodeCursor, type Page } from "../../../schema/common";
import type { IdentityProvider, InferenceGrant, Policy, PolicyBody, TelemetryTarget } from "../../../schema/admin/policy";
import type { CreateConsentBody, CreateProviderSecretBody, ProviderConsent, ProviderSecret } from "../../../schema/admin/providers";
import { ProviderConsents, type ConsentRecording } from "./consents";
import { resolveInferenceGrant, type InferenceGrantRequest } from "./inference-grant";
import { PolicyStore, type PolicyWrite } from "./policy-store";
import { ProviderSecrets, type SecretCreation } from "./provider-secrets";
import type { TenantDb } from "../types";

type Audit = (actor: string, action: string, target: string | null, detail: Record<string, unknown>) => void;

const Cursor = z.object({ c: z.string(), i: z.string() });

export class Governance {
  private readonly policies: PolicyStore;
  private readonly secrets: ProviderSecrets;
  private readonly consents: ProviderConsents;
  private readonly audit: Audit;
  private readonly toolHosts: () => string[];

  constructor(db: TenantDb, options: { masterKey: KeySource; mode: DeploymentMode; audit: Audit; toolHosts: () => string[] }) {
    this.audit = options.audit;
    this.toolHosts = options.toolHosts;
    this.policies = new PolicyStore(db, options.mode);
    this.secrets = new ProviderSecrets(db, options.masterKey);
    this.consents = new ProviderConsents(db);
  }

  policy(): Policy {
    return this.policies.current();
  }

  putPolicy(actor: string, body: PolicyBody, ifMatch?: number): PolicyWrite {
    const result = this.policies.put(actor, body, ifMatch);
    if (result.ok && result.changed) {
      const { policy } = result;
      this.audit(actor, "policy.updated", `policy:${policy.version}`, {
        version: policy.version,
        providers: policy.providers.map((endpoint) => ({ id: endpoint.id, kind: endpoint.kind, policyVersion: endpoint.policyVersion, models: endpoint.models, secretRefId: endpoint.secretRefId ?? null })),
        restrictedCategories: Object.keys(policy.categoryModels),
      });
    }
    return result;
  }

  async createSecret(actor: string, body: CreateProviderSecretBody, requestKey?: string): Promise<SecretCreation> {
    const result = await this.secrets.create(body, requestKey);
    if (result.ok && result.created) this.audit(actor, "provider_secret.created", result.secret.id, { provider: result.secret.provider, name: result.secret.name });
    return result;
  }

  listSecrets(query: { limit: number; cursor?: string | undefined }): Result<Page<ProviderSecret>> {
    const after = decodeCursor(query.cursor, Cursor);
    if (query.cursor && !after) return failure("validation_failed", "cursor is not valid");
    const page = this.secrets.page(query.limit, after);
    return { ok: true, data: page.data, nextCursor: page.last ? encodeCursor(page.last) : null };
  }

  revokeSecret(actor: string, id: string): Result<{ secret: ProviderSecret }> {
    const secret = this.secrets.revoke(id);
    if (!secret) return failure("not_found", "provider secret not found");
    const referencedBy = this.policy().providers.filter((endpoint) => endpoint.secretRefId === id).map((endpoint) => endpoint.id);
    this.audit(actor, "provider_secret.revoked", id, { provider: secret.provider, referencedBy });
    return { ok: true, secret };
  }

  recordConsent(actor: string, body: CreateConsentBody): ConsentRecording {
    const result = this.consents.record(actor, body, this.policy());
    if (result.ok && result.created) this.audit(actor, "provider_consent.recorded", result.consent.id, { provider: body.provider, model: body.model, policyVersion: body.policyVersion });
    return result;
  }

  listConsents(query: { limit: number; cursor?: string | undefined }): Result<Page<ProviderConsent>> {
    const after = decodeCursor(query.cursor, Cursor);
    if (query.cursor && !after) return failure("validation_failed", "cursor is not valid");
    const page = this.consents.page(query.limit, after);
    return { ok: true, data: page.data, nextCursor: page.last ? encodeCursor(page.last) : null };
  }

  inferenceGrant(request: InferenceGrantRequest): Promise<Result<{ grant: InferenceGrant }>> {
    return resolveInferenceGrant({ policy: () => this.policy(), consents: this.consents, secrets: this.secrets, audit: this.audit }, request);
  }

  /** The keyring's re-seal pass over this tenant's provider secrets: at most `limit` re-sealed per call. */
  resealSecrets(limit: number): ReturnType<ProviderSecrets["resealStale"]> {
    return this.secrets.resealStale(limit);
  }
  /** A live stored secret for `provider`, opened (an MCP server's bearer token). */
  openSecret(id: string, provider: string): ReturnType<ProviderSecrets["open"]> {
    return this.secrets.open(id, provider);
  }

  /** The tenant's egress allowlist: configured provider endpoints' hosts, its HTTP tools' hosts, its IdP's JWKS host, then its OTLP collector's host. */
  egressHosts(): string[] {
    const { identityProvider: idp, telemetry } = this.policy();
    return [...new Set([...endpointHosts(this.policy().providers), ...this.toolHosts(), ...(idp ? [new URL(idp.jwksUrl).host] : []), ...(telemetry ? [new URL(telemetry.otlpEndpoint).host] : [])])];
  }

  /**
   * Where the tenant's run traces go, with the headers secret opened (null: no export configured).
   * A revoked or unreadable headers secret refuses the export rather than send it without them.
   */
  async telemetryTarget(): Promise<Result<{ target: TelemetryTarget | null }>> {
    const policy = this.policy();
    const telemetry = policy.telemetry;
    if (!telemetry) return { ok: true, target: null };
    let headers: Record<string, string> = {};
    if (telemetry.headersSecretRefId !== undefined) {
      const opened = await this.secrets.open(telemetry.headersSecretRefId, OTLP_SECRET_PROVIDER);
      if (!opened.ok) return opened;
      const parsed = parseOtlpHeaders(opened.apiKey);
      if (!parsed.ok) return parsed;
      headers = parsed.headers;
    }
    return { ok: true, target: { endpoint: telemetry.otlpEndpoint, headers, includeBodies: telemetry.includeBodies, policyVersion: policy.version } };
  }

  /** What the Worker needs to verify the tenant's IdP tokens (no secrets in it). */
  identityProvider(): IdentityProvider | null {
    return this.policy().identityProvider ?? null;
  }
}
