import { failure, type Result } from "../../../http/error-codes";
import type { Page } from "../../../schema/common";
import type { CreateWebhookBody, WebhookDelivery, WebhookEndpoint } from "../../../schema/outbound-webhooks";
import { dumpTables, type TableDump } from "../../shared/debug-dump";
import { cursorPage, textKeyCursor } from "../../shared/paging";
import type { TenantErasure } from "../directory/erasure";
import type { RunOutcome } from "../channels/metrics";
import type { AttemptReport, OutboundDeliveries, PreparedAttempt } from "../channels/outbound-webhooks";
import type { ForwardedAgentEvent } from "../channels/tenant-event-log";
import type { EndpointCreation } from "../channels/webhook-endpoints";
import { TenantDecisionsRpc } from "./decisions";

/** What leaves the tenant (SPEC §7–§9): the tenant event stream, outbound webhooks, metrics, and erasure. */
export class TenantChannelsRpc extends TenantDecisionsRpc {
  /** An agent's forwarded events (one RPC per batch); a re-sent batch adds nothing. */
  async recordAgentEvents(agentId: string, events: ForwardedAgentEvent[]): Promise<Result<{ recorded: number }>> {
    return { ok: true, recorded: await this.parts.feed.recordAgentEvents(agentId, events) };
  }

  /** `GET /v1/events/stream` body: replay after `after`, then live; `agentIds` narrows it (widget tokens). */
  openTenantEvents(after: number, agentIds: string[] | null): Result<{ stream: ReadableStream<Uint8Array> }> {
    if (!this.getTenant()) return failure("not_found", "tenant not found");
    return { ok: true, stream: this.parts.tenantEvents.subscribe(after, agentIds) };
  }

  async createWebhook(actor: string, body: CreateWebhookBody, requestKey?: string): Promise<EndpointCreation> {
    const result = await this.parts.webhookEndpoints.create(body, requestKey);
    if (result.ok && result.created) this.audit(actor, "webhook.created", result.endpoint.id, { host: new URL(result.endpoint.url).host, eventTypes: result.endpoint.eventTypes });
    return result;
  }

  listWebhooks(query: { limit: number; cursor?: string | undefined }): Result<Page<WebhookEndpoint>> {
    return cursorPage(query.cursor, textKeyCursor, (after) => this.parts.webhookEndpoints.list(query.limit, after));
  }

  getWebhook(id: string): Result<{ endpoint: WebhookEndpoint }> {
    const endpoint = this.parts.webhookEndpoints.get(id);
    return endpoint ? { ok: true, endpoint } : failure("not_found", "webhook not found");
  }

  deleteWebhook(actor: string, id: string): Result<{ endpoint: WebhookEndpoint }> {
    const endpoint = this.parts.webhookEndpoints.delete(id);
    if (!endpoint) return failure("not_found", "webhook not found");
    this.audit(actor, "webhook.deleted", id, {});
    return { ok: true, endpoint };
  }

  listWebhookDeliveries(endpointId: string, query: { limit: number; cursor?: string | undefined }): Result<Page<WebhookDelivery>> {
    return cursorPage(query.cursor, textKeyCursor, (before) => this.parts.outbound.list(endpointId, query.limit, before));
  }

  /** Outbound consumer, step 1: what to send for this delivery (or skip it). */
  prepareOutboundAttempt(deliveryId: string): Promise<PreparedAttempt> {
    return this.parts.outbound.prepare(deliveryId);
  }

  /** Outbound consumer, step 2: record the attempt; the answer says ack (delivered/dead) or retry after a delay. */
  recordOutboundAttempt(deliveryId: string, attempt: number, report: AttemptReport): ReturnType<OutboundDeliveries["record"]> {
    return this.parts.outbound.record(deliveryId, attempt, report);
  }

  /** The outbound DLQ backstop. */
  deadLetterOutbound(deliveryId: string): void {
    this.parts.outbound.deadLetter(deliveryId);
  }

  /** A run reached a terminal status in one of the tenant's agents (metrics counters). */
  recordRunOutcome(outcome: RunOutcome): void {
    this.parts.metrics.recordRunOutcome(outcome);
  }

  /** GET /v1/metrics body (Prometheus text exposition). */
  metricsText(): string {
    return this.parts.metrics.render();
  }

  /** An agent was erased (SPEC §7): the tenant forgets its directory entry and agent-keyed rows, and audits it (src/objects/tenant/erasure.ts). */
  recordAgentErased(receipt: { agentId: string; reason: string; rows: Record<string, number> }): void {
    const tenantRows = this.parts.erasure.forgetAgent(receipt.agentId);
    this.audit("system", "agent.erased", receipt.agentId, { reason: receipt.reason, agentRows: receipt.rows, tenantRows });
  }

  /** `DELETE /v1/tenants/:id`: erases every agent and then every row of this tenant; the record survives in the operator audit object. */
  async eraseTenant(actor: string): Promise<Result<{ erasure: TenantErasure }>> {
    const tenant = this.getTenant();
    if (!tenant) return failure("not_found", "tenant not found");
    return { ok: true, erasure: await this.parts.erasure.eraseTenant(tenant.id, actor) };
  }

  /** Test seam (VIGIL_FAULTS=enabled only): every row of every SQLite table. */
  async debugDumpTables(): Promise<Result<{ tables: TableDump }>> {
    if (this.env.VIGIL_FAULTS !== "enabled") return failure("not_found", "no such method");
    return { ok: true, tables: await dumpTables(this.ctx.storage) };
  }
}
