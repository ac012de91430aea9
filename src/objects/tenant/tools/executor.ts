/**
 * Saga phase 1 for journal tools, and direct reads (seed 000 §4.4, §4.6). One call:
 * validate the arguments with the registry's input schema → run the handler under the caller's
 * category scope → check its output against the registry's output schema → answer an envelope.
 *
 * - Reads run on a read-only view; nothing is recorded.
 * - A mutating call is idempotent by operationId: its journal writes, their change units, ONE
 *   notification batch for all of them, and the `applied_operations` row holding the answered
 *   envelope commit in one transaction; a second call with the operationId answers that envelope.
 *   Refusals decided against the journal (out_of_scope, ambiguous_target, not_found, …) are recorded
 *   too, so an operation has exactly one outcome; internal failures are not (nor invalid arguments,
 *   which are refused before anything is read and refused alike on every replay).
 * - `previewOnly` runs the very same handler in a transaction that is always rolled back: the answer
 *   is the exact effect, nothing is written, dispatched or recorded.
 * - New record ids are `<prefix><20 hex of H("tool-id", intentKey, label, n)>` with the smallest n
 *   whose id was never used; `intentKey = H("tool-intent", agentId, toolName, canonicalArgsHash(args
 *   without previewOnly))`. A preview and its apply are two operations (previewOnly is part of the
 *   action's identity), so ids derive from the intent, not the operationId: over the same journal
 *   state, the apply creates exactly the ids its preview showed.
 */
import { canonicalArgsHash } from "../../../core/ids/action-ids";
import { CategoryScope } from "../../../core/governance/category-scope";
import { entityRefKey, type EntityRef } from "../../../core/ids/entity-refs";
import { H } from "../../../core/ids/hash";
import { normalizeTokens, tokenKey } from "../../../core/wakes/tokens";
import { toolFailure, toolSuccess, type ToolEffectLink, type ToolResultEnvelope } from "../../../core/tools/tool-envelopes";
import type { JournalType } from "../../../schema/agents/journal";
import { MCP_TOOL_PREFIX } from "../../../schema/admin/mcp-servers";
import { isJournalToolName, journalHandlers, type HandlerContext, type HandlerOutcome } from "../../../tools/handlers";
import type { ToolInvocation } from "../../../tools/invocation";
import { describeIssues, toolInvocationSchema } from "../../../tools/invocation-schema";
import { getTool, type ToolDefinition } from "../../../tools/registry";
import { nowIso } from "../../shared/sqlite";
import { AppliedOperations } from "./applied-operations";
import { KIND_META, type Journal, type JournalWrite, type JournalWriter } from "../journal";
import type { TenantDb } from "../types";

type Json = Parameters<typeof toolSuccess>[1]["output"];
type Action = { toolName: string; toolVersion: number; operationId: string; previewOnly: boolean };
type Failed = Extract<HandlerOutcome, { ok: false }>;
type Applied = { ok: true; envelope: ToolResultEnvelope } | (Failed & { replay?: ToolResultEnvelope });

/** Codes after which a later attempt of the same operation could succeed: never recorded. */
const NOT_RECORDED = new Set(["internal_error", "timeout", "upstream_error"]);

export interface ToolExecutorDeps {
  db: TenantDb;
  journal: Journal;
  timeZone: () => string;
  /** `http:<name>` calls (tenant HTTP tools). */
  callHttpTool: (invocation: ToolInvocation) => Promise<ToolResultEnvelope>;
  /** `mcp_<server>_<tool>` calls (tenant MCP servers). */
  callMcpTool: (invocation: ToolInvocation) => Promise<ToolResultEnvelope>;
  /** The calling agent's lifecycle as the directory knows it (null: unknown here). */
  agentLifecycle: (agentId: string) => string | null;
}

export class ToolExecutor {
  constructor(private readonly deps: ToolExecutorDeps) {}

  async execute(input: ToolInvocation): Promise<ToolResultEnvelope> {
    try {
      return await this.executeChecked(input);
    } catch (error) {
      // A bug (or a storage fault): the transaction rolled back; answer a value, never a half-applied operation.
      console.error(JSON.stringify({ level: "error", msg: "tool execution failed", tool: String(input?.toolName), error: String(error) }));
      const action = { toolName: String(input?.toolName ?? "unknown"), toolVersion: getTool(String(input?.toolName))?.version ?? 1, operationId: String(input?.operationId ?? "") };
      return refuse(action, "internal_error", "the tool failed unexpectedly; nothing was applied");
    }
  }

  private async executeChecked(input: ToolInvocation): Promise<ToolResultEnvelope> {
    const shape = toolInvocationSchema.safeParse(input);
    const unchecked = { toolName: String(input?.toolName ?? "unknown"), toolVersion: 1, operationId: String(input?.operationId ?? ""), previewOnly: false };
    if (!shape.success) return refuse(unchecked, "invalid_arguments", `not a valid tool invocation: ${describeIssues(shape.error).message}`);
    const inv = shape.data;
    // Destroy means stop: a saga still out when its agent was destroyed changes nothing (and records nothing).
    if (this.deps.agentLifecycle(inv.agentId) === "destroyed") return refuse(unchecked, "agent_destroyed", "the agent is destroyed; nothing was applied");
    if (inv.toolName.startsWith("http:")) return this.deps.callHttpTool(inv);
    if (inv.toolName.startsWith(MCP_TOOL_PREFIX)) return this.deps.callMcpTool(inv);
    const tool = getTool(inv.toolName);
    if (!tool) return refuse(unchecked, "unknown_tool", `${inv.toolName} is not a tool of this deployment`);
    const declared = { ...unchecked, toolName: tool.name, toolVersion: tool.version };
    if (!isJournalToolName(tool.name)) return refuse(declared, "not_tenant_tool", `${tool.name} runs in the agent, not in the tenant`);
    const parsed = tool.inputSchema.safeParse(inv.args);
    if (!parsed.success) {
      const { message, issues } = describeIssues(parsed.error);
      return refuse(declared, "invalid_arguments", message, { issues });
    }
    const args = parsed.data as Record<string, unknown>;
    const mutating = tool.sideEffects.kind === "journal_write";
    const preview = mutating && (inv.previewOnly || args.previewOnly === true);
    if (preview && !tool.supportsPreview) return refuse(declared, "preview_not_supported", `${tool.name} has no preview; call it without previewOnly`);
    const action: Action = { ...declared, previewOnly: preview };
    const run = (writer: JournalWriter) => this.run(tool, inv, args, writer, action);
    if (!mutating) {
      const outcome = run(this.deps.journal.reader());
      return outcome.ok ? outcome.envelope : refuse(action, outcome.code, outcome.message, outcome.details);
    }
    const meta = { source: `agent:${inv.agentId}`, authority: "runtime_instruction" as const };
    const outcome = await this.deps.journal.transact(
      meta,
      (writer, tx): Applied => {
        const stored = AppliedOperations.get(tx, inv.operationId);
        if (stored) return stored.toolName === tool.name ? { ok: false, code: "replay", message: "", replay: stored.envelope } : conflict(stored.toolName);
        const result = run(writer);
        if (result.ok && !preview) AppliedOperations.record(tx, { operationId: inv.operationId, agentId: inv.agentId, toolName: tool.name, envelope: result.envelope });
        return result;
      },
      preview ? "dry_run" : "apply",
    );
    if (outcome.ok) return outcome.envelope;
    if (outcome.replay) return outcome.replay;
    const failure = refuse(action, outcome.code, outcome.message, outcome.details);
    if (!preview && !NOT_RECORDED.has(outcome.code) && outcome.code !== "operation_conflict") {
      AppliedOperations.record(this.deps.db, { operationId: inv.operationId, agentId: inv.agentId, toolName: tool.name, envelope: failure });
    }
    return failure;
  }

  /** Handler → output check → envelope, all against `writer` (inside the caller's transaction, if any). */
  private run(tool: ToolDefinition, inv: ToolInvocation, args: Record<string, unknown>, writer: JournalWriter, action: Action): Applied {
    const { previewOnly: _preview, ...intentArgs } = args;
    const intentKey = H("tool-intent", inv.agentId, tool.name, canonicalArgsHash(intentArgs));
    const ctx: HandlerContext = {
      journal: writer,
      scope: new CategoryScope(inv.scope.allowedCategoryIds),
      newId: (type: JournalType, label: string) => {
        for (let n = 0; ; n++) {
          const id = `${KIND_META[type].idPrefix}${H("tool-id", intentKey, label, n).slice(0, 20)}`;
          if (!writer.rows.exists(id)) return id;
        }
      },
      derive: (label: string) => H("tool-derived", intentKey, label),
      timeZone: this.deps.timeZone(),
      now: nowIso,
    };
    const handler = journalHandlers[tool.name as keyof typeof journalHandlers] as (args: unknown, ctx: HandlerContext) => HandlerOutcome;
    const result = handler(args, ctx);
    if (!result.ok) return result;
    const output = tool.outputSchema.safeParse(result.output);
    if (!output.success) {
      // The handler broke its own contract: a bug, never a partial write (the transaction rolls back).
      console.error(JSON.stringify({ level: "error", msg: "tool output does not match its schema", tool: tool.name, issues: describeIssues(output.error).message }));
      return { ok: false, code: "internal_error", message: `${tool.name} produced an output that does not match its schema` };
    }
    const envelope = toolSuccess(action, {
      actionRefId: inv.operationId,
      output: output.data as Json,
      links: effectLinks(writer.writes, result.reads ?? []),
      changedTokens: normalizeTokens(writer.tokens()).map(tokenKey),
    });
    return { ok: true, envelope };
  }
}

const EFFECT = { create: "created", update: "updated", delete: "deleted" } as const;

/** One `tool_effect` link per written record (first effect wins), then the reads that were not written. */
function effectLinks(writes: readonly JournalWrite[], reads: readonly EntityRef[]): ToolEffectLink[] {
  const links = new Map<string, ToolEffectLink>();
  const add = (target: EntityRef, effect: ToolEffectLink["effect"]) => {
    const key = entityRefKey(target);
    if (!links.has(key)) links.set(key, { relation: "tool_effect", target: { type: target.type, id: target.id }, effect });
  };
  for (const write of writes) {
    add({ type: write.after.type, id: write.after.id }, EFFECT[write.op]);
    for (const cascaded of write.cascaded) add({ type: cascaded.type, id: cascaded.id }, write.op === "delete" ? "deleted" : "updated");
  }
  for (const read of reads) add(read, "read");
  return [...links.values()];
}

const conflict = (storedTool: string): Failed => ({ ok: false, code: "operation_conflict", message: `this operationId was already applied by ${storedTool}` });

function refuse(action: Omit<Action, "previewOnly">, code: string, message: string, details?: Record<string, Json>): ToolResultEnvelope {
  return toolFailure(action, { actionRefId: action.operationId || "unknown", code, message: message.slice(0, 2_000), retryable: code === "timeout" || code === "upstream_error", ...(details ? { details } : {}) });
}
