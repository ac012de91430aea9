import type { ToolResultEnvelope } from "../../../core/tool-envelopes";
import { failure, type Result } from "../../../http/error-codes";
import type { Page } from "../../../schema/common";
import type { JournalRecord, JournalType } from "../../../schema/journal";
import type { RegisterToolBody, TenantTool, ToolListing } from "../../../schema/tools";
import type { ToolInvocation } from "../../../tools/invocation";
import { listToolDescriptors } from "../../../tools/registry";
import type { JournalListQuery, JournalResult, JournalWriteMeta } from "../journal";
import type { ToolRegistration } from "../tools/http-tools";
import { TenantAccessRpc } from "./access";

/** The journal domain (SPEC §1) and tools: saga phase 1 with its applied operations, and the tenant's HTTP tools. */
export class TenantJournalRpc extends TenantAccessRpc {
  /** Journal CRUD; every write records one notification batch, then dispatches. */
  journalCreate(type: JournalType, input: unknown, meta?: JournalWriteMeta): Promise<JournalResult> {
    return this.parts.journal.create(type, input, meta);
  }

  journalGet(type: JournalType, id: string): JournalResult {
    return this.parts.journal.get(type, id);
  }

  journalList(type: JournalType, query: JournalListQuery): Result<Page<JournalRecord>> {
    return this.parts.journal.list(type, query);
  }

  journalPatch(type: JournalType, id: string, input: unknown, meta?: JournalWriteMeta): Promise<JournalResult> {
    return this.parts.journal.patch(type, id, input, meta);
  }

  journalDelete(type: JournalType, id: string, version: number, meta?: JournalWriteMeta): Promise<JournalResult> {
    return this.parts.journal.delete(type, id, version, meta);
  }

  /** One tool call for an agent: a journal tool (idempotent by operationId, or a read) or `http:<name>`. */
  executeTool(invocation: ToolInvocation): Promise<ToolResultEnvelope> {
    return this.parts.tools.execute(invocation);
  }

  /** `GET /v1/tools`: the built-in registry, then the tenant's HTTP tools. */
  listTools(): ToolListing[] {
    return [...listToolDescriptors().map((descriptor): ToolListing => ({ kind: "builtin", ...descriptor })), ...this.parts.tenantTools.descriptors()];
  }

  async registerTenantTool(actor: string, body: RegisterToolBody, requestKey?: string): Promise<ToolRegistration> {
    const result = await this.parts.tenantTools.register(body, requestKey);
    if (result.ok && result.created) this.audit(actor, "tool.registered", result.tool.id, { name: result.tool.name, host: new URL(result.tool.url).host });
    return result;
  }

  deleteTenantTool(actor: string, id: string): Result<{ tool: TenantTool }> {
    const tool = this.parts.tenantTools.delete(id);
    if (!tool) return failure("not_found", "tool not found");
    this.audit(actor, "tool.deleted", id, { name: tool.name });
    return { ok: true, tool };
  }
}
