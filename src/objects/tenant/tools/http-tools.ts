import type { KeySource } from "../../../core/egress/keyring";
/**
 * The tenant's HTTP tools. Registration checks the input
 * schema and the URL, and seals a fresh signing secret with secret-box (bound to the tool id); the
 * secret leaves only in the registration answer. A call (`http:<name>`) validates its arguments
 * against the stored schema, sends one signed request (`src/tools/http-call.ts`), and records the
 * answered envelope in `applied_operations` under its operationId, so a replay never calls twice.
 * Outcomes that a retry could change (timeout, unreachable, 5xx/429) are not recorded: the retry
 * sends the same `Vigil-Operation-Id`, and the receiver deduplicates on it.
 */
import { and, asc, eq, isNull } from "drizzle-orm";
import { config } from "../../../config";
import type { DeploymentMode } from "../../../core/egress/deployment-mode";
import { checkUrlShape } from "../../../core/egress/egress";
import { canonicalJson, H } from "../../../core/ids/hash";
import { createSecretBox, type SecretBox } from "../../../core/egress/secret-box";
import { toolFailure, toolSuccess, type ToolResultEnvelope } from "../../../core/tools/tool-envelopes";
import * as schema from "../../../db/tenant-schema";
import { failure, type Result } from "../../../core/runtime/result";
import { randomId, randomSecret } from "../../../ids";
import { HTTP_TOOL_PREFIX, type RegisterToolBody, type TenantTool, type ToolListing } from "../../../schema/admin/tools";
import { sendHttpToolRequest } from "../../../tools/http-call";
import type { ToolInvocation } from "../../../tools/invocation";
import { checkToolInputSchema, validateToolArgs } from "../../../tools/json-schema-check";
import { ANY_WAKE } from "../../../tools/registry";
import { nowIso } from "../../shared/sqlite";
import { AppliedOperations } from "./applied-operations";
import type { Audit, TenantDb } from "../types";
import { SingleFlight } from "../../shared/single-flight";

type Row = typeof schema.tenantTools.$inferSelect;
type Json = Parameters<typeof toolSuccess>[1]["output"];

/** HKDF purpose of the sealed signing secrets (kept here until secret-box's SECRET_PURPOSES lists it). */
export const TENANT_TOOL_SECRET_PURPOSE = "vigil/tenant-tool-secret";

export type ToolRegistration = Result<{ tool: TenantTool; secret: string; created: boolean }>;

export class TenantTools {
  private readonly box: SecretBox;
  /** Calls in flight per operationId: a concurrent duplicate waits for the first instead of sending again. */
  private readonly inFlight = new SingleFlight<ToolResultEnvelope>();

  constructor(
    private readonly db: TenantDb,
    masterKey: KeySource,
    /** local: tools may be plain-http loopback/private receivers; deployed: https to public hosts only. */
    private readonly mode: DeploymentMode,
    /** Every request a call sends (or is refused) is audited with its run (`egress.http_tool`). */
    private readonly audit: Audit,
  ) {
    this.box = createSecretBox(masterKey, TENANT_TOOL_SECRET_PURPOSE);
  }

  /** With an Idempotency-Key the id derives from it: the same request answers the original tool (and its secret); another is a 409. */
  async register(body: RegisterToolBody, requestKey?: string): Promise<ToolRegistration> {
    const schemaCheck = checkToolInputSchema(body.inputSchema);
    if (!schemaCheck.ok) return failure("validation_failed", schemaCheck.message);
    const url = checkUrlShape(body.url, this.mode);
    if (!url.ok) return failure("validation_failed", `url: ${url.message}`);
    const id = requestKey === undefined ? randomId("tt_") : `tt_${H("tenant-tool.create", requestKey).slice(0, 20)}`;
    const existing = requestKey === undefined ? undefined : this.row(id);
    if (existing) return this.replay(existing, body);
    const secret = `vts_${randomSecret(32)}`;
    const secretCiphertext = await this.box.seal(secret, id);
    // Checked after the await: a concurrent registration may have taken the name meanwhile.
    if (this.liveByName(body.name)) return failure("conflict", `a tool named ${body.name} already exists; delete it first`);
    if (this.live().length >= config.tenantTools.maxPerTenant) return failure("conflict", `a tenant may register at most ${config.tenantTools.maxPerTenant} tools`);
    const row: Row = { id, ...body, url: url.url.toString(), secretCiphertext, createdAt: nowIso(), deletedAt: null };
    this.db.insert(schema.tenantTools).values(row).run();
    return { ok: true, tool: toRecord(row), secret, created: true };
  }

  list(): TenantTool[] {
    return this.live().map(toRecord);
  }

  /** Soft delete: the name is free again, calls answer unknown_tool, the sealed secret is wiped. */
  delete(id: string): TenantTool | null {
    const row = this.row(id);
    if (!row || row.deletedAt) return null;
    this.db.update(schema.tenantTools).set({ deletedAt: nowIso(), secretCiphertext: "" }).where(eq(schema.tenantTools.id, id)).run();
    return toRecord(row);
  }

  /** The tenant's tools as agents are offered them (`http:<name>`). */
  descriptors(): ToolListing[] {
    return this.live().map((row) => ({
      kind: "http",
      name: `${HTTP_TOOL_PREFIX}${row.name}`,
      version: 1,
      description: row.description,
      riskLevel: row.riskLevel as TenantTool["riskLevel"],
      supportsPreview: false,
      capabilitiesRequired: [row.capability],
      allowedWakeReasons: [...ANY_WAKE],
      idempotencyStrategy: "operation_id",
      scopeRules: ["none"],
      sideEffects: { kind: "external_http", entityTypes: [], semanticKeys: [] },
      dataMinimizationPolicyRef: "dm.tenant_tool.args.v1",
      inputSchema: row.inputSchema,
      outputSchema: {},
      id: row.id,
      url: row.url,
      method: row.method as TenantTool["method"],
      createdAt: row.createdAt,
    }));
  }

  /** `executeTool` for `http:<name>`. */
  call(inv: ToolInvocation): Promise<ToolResultEnvelope> {
    return this.inFlight.run(inv.operationId, () => this.perform(inv));
  }

  private async perform(inv: ToolInvocation): Promise<ToolResultEnvelope> {
    const action = { toolName: inv.toolName, toolVersion: 1, operationId: inv.operationId, previewOnly: false };
    const refuse = (code: string, message: string, retryable = false, details?: Record<string, Json>) =>
      toolFailure(action, { actionRefId: inv.operationId, code, message, retryable, ...(details ? { details } : {}) });
    const stored = AppliedOperations.get(this.db, inv.operationId);
    if (stored) return stored.toolName === inv.toolName ? stored.envelope : refuse("operation_conflict", `this operationId was already applied by ${stored.toolName}`);
    const row = this.liveByName(inv.toolName.slice(HTTP_TOOL_PREFIX.length));
    if (!row) return refuse("unknown_tool", `${inv.toolName} is not a registered tool of this tenant`);
    if (inv.previewOnly) return refuse("preview_not_supported", "tenant HTTP tools have no preview");
    const valid = validateToolArgs(row.inputSchema, inv.args);
    if (!valid.ok) return this.settle(inv, refuse("invalid_arguments", valid.message, false, { issues: valid.issues }));
    const opened = await this.box.open(row.secretCiphertext, row.id);
    if (!opened.ok) return refuse("internal_error", "this tool's signing secret cannot be read (was VIGIL_MASTER_KEY changed?); register the tool again");
    const outcome = await sendHttpToolRequest({
      url: row.url,
      method: row.method,
      toolName: row.name,
      secret: opened.secret,
      operationId: inv.operationId,
      args: inv.args,
      mode: this.mode,
      nowMs: Date.now(),
      record: (entry) => this.audit(`agent:${inv.agentId}`, "egress.http_tool", inv.operationId, { runKey: inv.runKey, toolName: inv.toolName, ...entry }),
    });
    if (!outcome.ok) return this.settle(inv, refuse(outcome.code, outcome.message, outcome.retryable, { requestSent: outcome.sent, ...(outcome.details ?? {}) }));
    const links = [{ relation: "tool_effect" as const, target: { type: "external_http", id: row.id }, effect: "updated" as const }];
    return this.settle(inv, toolSuccess(action, { actionRefId: inv.operationId, output: outcome.body as Json, links }));
  }

  /** Records a final answer once (the first recorded one wins) and returns the recorded envelope. */
  private settle(inv: ToolInvocation, envelope: ToolResultEnvelope): ToolResultEnvelope {
    if (!envelope.ok && envelope.retryable) return envelope;
    const stored = AppliedOperations.get(this.db, inv.operationId);
    if (stored) return stored.envelope;
    AppliedOperations.record(this.db, { operationId: inv.operationId, agentId: inv.agentId, toolName: inv.toolName, envelope });
    return envelope;
  }

  private async replay(row: Row, body: RegisterToolBody): Promise<ToolRegistration> {
    const conflict = failure("idempotency_conflict", "this Idempotency-Key already registered a different tool");
    if (row.deletedAt) return failure("idempotency_conflict", "the tool registered with this Idempotency-Key was deleted");
    if (Date.now() - Date.parse(row.createdAt) > config.idempotency.retentionHours * 3_600_000) return conflict;
    const { secretCiphertext: _sealed, id: _id, createdAt: _at, deletedAt: _deleted, url: storedUrl, ...stored } = row;
    if (canonicalJson({ ...stored, url: storedUrl }) !== canonicalJson({ ...body, url: new URL(body.url).toString() })) return conflict;
    const opened = await this.box.open(row.secretCiphertext, row.id);
    return opened.ok ? { ok: true, tool: toRecord(row), secret: opened.secret, created: false } : conflict;
  }

  private live(): Row[] {
    return this.db.select().from(schema.tenantTools).where(isNull(schema.tenantTools.deletedAt)).orderBy(asc(schema.tenantTools.createdAt), asc(schema.tenantTools.id)).all();
  }

  private liveByName(name: string): Row | undefined {
    return this.db.select().from(schema.tenantTools).where(and(eq(schema.tenantTools.name, name), isNull(schema.tenantTools.deletedAt))).get();
  }

  private row(id: string): Row | undefined {
    return this.db.select().from(schema.tenantTools).where(eq(schema.tenantTools.id, id)).get();
  }
}

function toRecord(row: Row): TenantTool {
  const { secretCiphertext: _sealed, deletedAt: _deleted, ...tool } = row;
  return { ...tool, method: tool.method as TenantTool["method"], riskLevel: tool.riskLevel as TenantTool["riskLevel"], capability: tool.capability as TenantTool["capability"] };
}
