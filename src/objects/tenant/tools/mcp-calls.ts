/**
 * Calls to MCP tools (`mcp_<server>_<tool>`). The arguments are validated against the
 * server's input schema, then sent through an `McpSession` (NEED_TO_KNOW guard + egress door).
 *
 * A read-only tool is called directly; nothing is recorded. A mutating one runs as saga phase 1 and
 * must never reach the server twice for one operationId, though MCP has no idempotency of its own:
 * 1. a recorded outcome (`applied_operations`) is answered as it is;
 * 2. otherwise an intent row is written BEFORE the request leaves;
 * 3. the answer (or a failure after sending) is recorded and the intent removed, together.
 * A replay that finds an intent without an outcome — the object crashed or was evicted between
 * send and record — does not send again: it records `outcome_unknown` (at-most-once) and the agent
 * reads that the effect may or may not have happened. A concurrent duplicate inside one object
 * waits for the call in flight instead.
 */
import { eq } from "drizzle-orm";
import { config } from "../../../config";
import { toolFailure, toolSuccess, type ToolResultEnvelope } from "../../../core/tools/tool-envelopes";
import * as schema from "../../../db/tenant-schema";
import type { ToolInvocation } from "../../../tools/invocation";
import { validateToolArgs } from "../../../tools/json-schema-check";
import { refusalOf, withMcpSession, type McpCallOutput } from "../../../tools/mcp-client";
import { nowIso } from "../../shared/sqlite";
import { AppliedOperations } from "./applied-operations";
import { describeFailure, type McpServers } from "./mcp-servers";
import type { Audit, TenantDb } from "../types";
import { SingleFlight } from "../../shared/single-flight";

type Json = Parameters<typeof toolSuccess>[1]["output"];

export class McpCalls {
  private readonly inFlight = new SingleFlight<ToolResultEnvelope>();

  constructor(private readonly deps: { db: TenantDb; servers: McpServers; audit: Audit; /** Makes the intent durable before the request leaves. */ flush: () => Promise<void>; /** Test seam: crashes the object right after the server answered `toolName`. */ crashAfterSend?: (toolName: string) => void }) {}

  call(inv: ToolInvocation): Promise<ToolResultEnvelope> {
    return this.inFlight.run(inv.operationId, () => this.perform(inv));
  }

  private async perform(inv: ToolInvocation): Promise<ToolResultEnvelope> {
    const resolved = this.deps.servers.resolve(inv.toolName);
    const action = { toolName: inv.toolName, toolVersion: resolved?.server.toolsVersion ?? 1, operationId: inv.operationId, previewOnly: false };
    const refuse = (code: string, message: string, retryable = false, details?: Record<string, Json>) =>
      toolFailure(action, { actionRefId: inv.operationId, code, message: message.slice(0, 2_000), retryable, ...(details ? { details } : {}) });
    const stored = AppliedOperations.get(this.deps.db, inv.operationId);
    if (stored) return stored.toolName === inv.toolName ? stored.envelope : refuse("operation_conflict", `this operationId was already applied by ${stored.toolName}`);
    const intent = this.intent(inv.operationId);
    if (intent) {
      // Sent before, outcome never recorded: at-most-once means never sending it again.
      return this.settle(inv, refuse("outcome_unknown", "the request reached (or may have reached) the MCP server, but its answer was never recorded; it is not sent again, so the effect may or may not have happened", false, { requestSent: true, sentAt: intent.sentAt }));
    }
    if (!resolved) return refuse("unknown_tool", `${inv.toolName} is not a tool of a registered MCP server of this tenant`);
    const { server, tool } = resolved;
    if (inv.previewOnly) return refuse("preview_not_supported", "MCP tools have no preview");
    const valid = validateToolArgs(tool.inputSchema, inv.args);
    if (!valid.ok) return tool.mutating ? this.settle(inv, refuse("invalid_arguments", valid.message, false, { issues: valid.issues })) : refuse("invalid_arguments", valid.message, false, { issues: valid.issues });
    const session = await this.deps.servers.sessionOptions(server, (entry) => this.deps.audit(`agent:${inv.agentId}`, "egress.mcp", inv.operationId, { runKey: inv.runKey, toolName: inv.toolName, server: server.name, ...entry }));
    if (!session.ok) return refuse("secret_unavailable", session.message);

    if (tool.mutating) {
      this.deps.db.insert(schema.mcpCallIntents).values({ operationId: inv.operationId, serverId: server.id, toolName: inv.toolName, sentAt: nowIso() }).run();
      await this.deps.flush();
    }
    let sent = false;
    let envelope: ToolResultEnvelope;
    try {
      const output = await withMcpSession(session.options, async (mcp) => {
        try {
          return await mcp.callTool(tool.remoteName, inv.args);
        } finally {
          sent = mcp.callSent;
        }
      });
      this.deps.crashAfterSend?.(inv.toolName);
      envelope = this.envelopeOf(action, inv, server.id, output);
    } catch (error) {
      const refused = refusalOf(error);
      if (refused && !refused.sent) envelope = refuse(refused.code, refused.message, false, { requestSent: false });
      else if (sent) envelope = refuse("outcome_unknown", `the MCP call failed after its request was sent (${describeFailure(error)}); it is not sent again`, false, { requestSent: true });
      else envelope = refuse("upstream_error", `the MCP server could not be reached: ${describeFailure(error)}`, !tool.mutating, { requestSent: false });
    }
    return tool.mutating ? this.settle(inv, envelope) : envelope;
  }

  private envelopeOf(action: { toolName: string; toolVersion: number; operationId: string; previewOnly: boolean }, inv: ToolInvocation, serverId: string, output: McpCallOutput): ToolResultEnvelope {
    const body: Record<string, unknown> = { content: Array.isArray(output.content) ? output.content : [] };
    if (output.structuredContent) body.structuredContent = output.structuredContent;
    if (JSON.stringify(body).length > config.mcp.maxResultBytes) {
      return toolFailure(action, { actionRefId: inv.operationId, code: "response_too_large", message: `the MCP tool's answer exceeds ${config.mcp.maxResultBytes} bytes`, retryable: false, details: { requestSent: true } });
    }
    if (output.isError) {
      const text = (body.content as Array<{ type?: string; text?: string }>).filter((part) => part.type === "text").map((part) => part.text ?? "").join("\n");
      return toolFailure(action, { actionRefId: inv.operationId, code: "tool_error", message: (text || "the MCP tool reported an error").slice(0, 2_000), retryable: false, details: { requestSent: true } });
    }
    return toolSuccess(action, { actionRefId: inv.operationId, output: body as Json, links: [{ relation: "tool_effect", target: { type: "external_mcp", id: serverId }, effect: "updated" }] });
  }

  /** Records the first outcome and clears the intent in one stretch of synchronous writes (one implicit transaction). */
  private settle(inv: ToolInvocation, envelope: ToolResultEnvelope): ToolResultEnvelope {
    const stored = AppliedOperations.get(this.deps.db, inv.operationId);
    if (stored) return stored.envelope;
    AppliedOperations.record(this.deps.db, { operationId: inv.operationId, agentId: inv.agentId, toolName: inv.toolName, envelope });
    this.deps.db.delete(schema.mcpCallIntents).where(eq(schema.mcpCallIntents.operationId, inv.operationId)).run();
    return envelope;
  }

  private intent(operationId: string): { sentAt: string } | undefined {
    return this.deps.db.select({ sentAt: schema.mcpCallIntents.sentAt }).from(schema.mcpCallIntents).where(eq(schema.mcpCallIntents.operationId, operationId)).get();
  }
}
