import { eq } from "drizzle-orm";
import { z } from "zod";
import { config } from "../../../config";
import { decisionTimeoutPolicySchema, type DecisionTimeoutPolicy } from "../../../core/governance/decision";
import { CONTROL_MODES, type ControlMode } from "../../../core/governance/escalation";
import * as schema from "../../../db/tenant-schema";
import type { Env } from "../../../env";
import { HTTP_TOOL_PREFIX } from "../../../schema/admin/tools";
import { validateToolArgs } from "../../../tools/json-schema-check";
import { getTool } from "../../../tools/registry";
import type { DecisionsDeps } from "./decisions";
import { ToolApprovals, type ApprovalAnswer, type ApprovalRequest, type ApprovalState } from "./tool-approvals";
import { TrustStore } from "./trust-store";
import type { TenantDb } from "../types";
import { resolveTrustProfile, type TrustCalibrationProfile } from "../../../core/governance/trust";
import { TrustPolicy } from "../../../schema/admin/policy";

export interface ApprovalsDeps {
  db: TenantDb;
  env: Env;
  /** The tenant policy as governance serves it (read for `decisionTimeouts` only). */
  policy(): unknown;
  /** A registered HTTP tool's JSON Schema by bare name, or null. */
  httpInputSchema(name: string): Record<string, unknown> | null;
}

const TICK_KEY = "decisionTickMs";
const overridesSchema = z.partialRecord(z.enum(CONTROL_MODES), decisionTimeoutPolicySchema);

/**
 * The TenantDO's approval machinery in one place: the trust store, tool approvals, the tick length,
 * the policy's timeout overrides, and the wake-up events sent to waiting tool sagas.
 */
export class Approvals {
  readonly trust: TrustStore;
  readonly tools: ToolApprovals;

  constructor(private readonly deps: ApprovalsDeps) {
    this.trust = new TrustStore(deps.db, () => this.trustProfile());
    this.tools = new ToolApprovals({
      db: deps.db,
      trust: this.trust,
      tickMs: () => this.tickMs(),
      timeoutOverrides: () => this.timeoutOverrides(),
      validateArgs: (toolName, args) => this.validateArgs(toolName, args),
    });
  }

  decisionsDeps(): DecisionsDeps {
    return { db: this.deps.db, trust: this.trust, approvals: this.tools, tickMs: () => this.tickMs(), wakeSagas: (ids) => ids.forEach((id) => this.wakeSaga(id)) };
  }

  request(request: ApprovalRequest): ApprovalAnswer {
    return this.tools.request(request);
  }

  state(decisionId: string): ApprovalState {
    return this.tools.state(decisionId);
  }

  timedOut(decisionId: string): ApprovalState {
    return this.tools.timedOut(decisionId);
  }

  tickMs(): number {
    const row = this.deps.db.select().from(schema.approvalSettings).where(eq(schema.approvalSettings.key, TICK_KEY)).get();
    return typeof row?.value === "number" && row.value > 0 ? row.value : config.decisions.tickMs;
  }

  /** Test seam (the TenantDO allows it only with the `clocks` seam): this tenant's tick length; null restores the default. */
  setTickMs(ms: number | null): void {
    if (ms === null) this.deps.db.delete(schema.approvalSettings).where(eq(schema.approvalSettings.key, TICK_KEY)).run();
    else this.deps.db.insert(schema.approvalSettings).values({ key: TICK_KEY, value: ms }).onConflictDoUpdate({ target: schema.approvalSettings.key, set: { value: ms } }).run();
  }

  /** Wakes a waiting saga (it re-reads its decision); events are buffered if the saga is not waiting yet. */
  wakeSaga(operationId: string): Promise<void> {
    return this.deps.env.TOOL_SAGA.get(operationId)
      .then((instance) => instance.sendEvent({ type: "decision", payload: { operationId } }))
      .catch((error: unknown) => console.error(JSON.stringify({ level: "error", msg: "decision event to tool saga failed", operationId, error: String(error) })));
  }

  /** Wakes the sagas of these operations and answers them once every wake was sent (double texting `interrupt`, agent erasure). */
  async wakeSagas(operationIds: string[]): Promise<string[]> {
    await Promise.all(operationIds.map((operationId) => this.wakeSaga(operationId)));
    return operationIds;
  }

  /** The policy's calibration profile; an absent or unreadable policy means the seed's balanced profile. */
  private trustProfile(): TrustCalibrationProfile {
    const parsed = TrustPolicy.safeParse((this.deps.policy() as { trust?: unknown } | null)?.trust ?? {});
    return parsed.success ? resolveTrustProfile(parsed.data.profile, parsed.data.overrides) : resolveTrustProfile();
  }

  /** The policy's per-mode overrides; an absent or unreadable policy means the seed defaults. */
  private timeoutOverrides(): Partial<Record<ControlMode, DecisionTimeoutPolicy>> {
    const policy = this.deps.policy() as { decisionTimeouts?: unknown } | null;
    const parsed = overridesSchema.safeParse(policy?.decisionTimeouts ?? {});
    return parsed.success ? parsed.data : {};
  }

  private validateArgs(toolName: string, args: Record<string, unknown>): { ok: true; args: Record<string, unknown> } | { ok: false; message: string } {
    if (toolName.startsWith(HTTP_TOOL_PREFIX)) {
      const inputSchema = this.deps.httpInputSchema(toolName.slice(HTTP_TOOL_PREFIX.length));
      if (!inputSchema) return { ok: false, message: `${toolName} is no longer registered` };
      const valid = validateToolArgs(inputSchema, args);
      return valid.ok ? { ok: true, args } : { ok: false, message: valid.message };
    }
    const tool = getTool(toolName);
    if (!tool) return { ok: false, message: `unknown tool ${toolName}` };
    const parsed = tool.inputSchema.safeParse(args);
    if (parsed.success) return { ok: true, args: parsed.data as Record<string, unknown> };
    return { ok: false, message: parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`).join("; ") };
  }
}
