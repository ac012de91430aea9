/**
 * The tenant's governance policy, kept as an append-only list of versions: a PUT
 * validates the whole body (zod at the edge, `checkPolicy` here) and appends version n+1; the
 * highest version is current; version 0 is the empty default. A PUT whose body equals the current
 * one appends nothing, so retrying a PUT is harmless.
 */
import { desc, isNull } from "drizzle-orm";
import type { DeploymentMode } from "../../../core/egress/deployment-mode";
import { canonicalJson } from "../../../core/ids/hash";
import { checkPolicy, type PolicyIssue } from "../../../core/governance/policy-rules";
import * as schema from "../../../db/tenant-schema";
import type { Failure } from "../../../core/runtime/result";
import { EMPTY_POLICY, Policy, PolicyBody } from "../../../schema/admin/policy";
import { nowIso } from "../../shared/sqlite";
import type { TenantDb } from "../types";
import { EXTENSION_REGISTRY_LIMITS } from "../../../core/memory/extension-slots";
import { checkSchemaDocument } from "../../../tools/json-schema-check";

/** A failure that names the failing fields (rendered as the problem's `errors`). */
export type FieldFailure = Failure & { fields?: PolicyIssue[] };

export type PolicyWrite = ({ ok: true; policy: Policy; changed: boolean }) | FieldFailure;

export class PolicyStore {
  /** Parsed current policy; every write goes through this object, so the cache cannot go stale. */
  private cached: Policy | null = null;

  constructor(
    private readonly db: TenantDb,
    private readonly mode: DeploymentMode,
  ) {}

  current(): Policy {
    if (this.cached) return this.cached;
    const row = this.db.select().from(schema.policy).orderBy(desc(schema.policy.version)).limit(1).get();
    // Stored bodies were validated when written; parsing again fills defaults added since.
    this.cached = row ? Policy.parse({ ...row.body, version: row.version, updatedAt: row.updatedAt }) : EMPTY_POLICY;
    return this.cached;
  }

  /** `ifMatch`: the version the caller last read; another current version is a version_conflict. */
  put(actor: string, input: PolicyBody, ifMatch?: number): PolicyWrite {
    const parsed = PolicyBody.safeParse(input);
    if (!parsed.success) {
      const fields = parsed.error.issues.map((issue) => ({ path: issue.path.join(".") || "(root)", message: issue.message }));
      return invalid(fields);
    }
    const current = this.current();
    if (ifMatch !== undefined && ifMatch !== current.version) {
      return { ok: false, code: "version_conflict", message: `the policy is at version ${current.version}, not ${ifMatch}; read it again and retry` };
    }
    const issues = [...checkPolicy(parsed.data, { secretProviders: this.liveSecretProviders(), mode: this.mode }), ...checkExtensionSchemas(parsed.data)];
    if (issues.length > 0) return invalid(issues);
    const { version: _version, updatedAt: _updatedAt, ...currentBody } = current;
    if (canonicalJson(currentBody) === canonicalJson(parsed.data)) return { ok: true, policy: current, changed: false };
    const row = { version: current.version + 1, body: parsed.data as Record<string, unknown>, actor, updatedAt: nowIso() };
    this.db.insert(schema.policy).values(row).run();
    this.cached = null;
    return { ok: true, policy: this.current(), changed: true };
  }

  private liveSecretProviders(): Map<string, string> {
    const rows = this.db.select({ id: schema.providerSecrets.id, provider: schema.providerSecrets.provider }).from(schema.providerSecrets).where(isNull(schema.providerSecrets.revokedAt)).all();
    return new Map(rows.map((row) => [row.id, row.provider]));
  }
}

/** Each registered extension slot schema must be a well-formed, compilable JSON Schema (the same check as tenant tool schemas). */
function checkExtensionSchemas(body: PolicyBody): PolicyIssue[] {
  return Object.entries(body.extensionSlots).flatMap(([key, registration]) => {
    const check = checkSchemaDocument(registration.schema, { label: "schema", maxBytes: EXTENSION_REGISTRY_LIMITS.maxSchemaBytes, objectRoot: false });
    return check.ok ? [] : [{ path: `extensionSlots.${key}.schema`, message: check.message }];
  });
}

function invalid(fields: PolicyIssue[]): FieldFailure {
  return { ok: false, code: "validation_failed", message: `invalid policy: ${fields.map((f) => `${f.path}: ${f.message}`).join("; ")}`, fields };
}
