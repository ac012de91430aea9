import { failure, type Result } from "../../../http/error-codes";
import type { Page } from "../../../schema/common";
import type { IngestEventBody, Subscription, SubscriptionSpec } from "../../../schema/subscriptions";
import type { CreateWebhookSourceBody, SourceDelivery, TriggerAction, WebhookSourceRecord } from "../../../schema/webhooks";
import { cursorPage, textKeyCursor } from "../../shared/paging";
import { runAlertnessBenchOp, type AlertnessBenchAnswer, type AlertnessBenchOp } from "../alertness/bench-ops";
import type { EventIngest } from "../alertness/inbound-events";
import type { TriggerAdmission, TriggerOutcome } from "../alertness/triggers";
import type { SourceCreation, SourceIngest } from "../alertness/webhook-sources";
import { TenantJournalRpc } from "./journal";

/** Alertness: agents' subscriptions, inbound events, external triggers, signed webhook sources, and dispatch to wakes. */
export class TenantAlertnessRpc extends TenantJournalRpc {
  createSubscription(agentId: string, spec: SubscriptionSpec): Result<{ subscription: Subscription }> {
    return this.parts.subscriptions.subscribe(agentId, spec);
  }

  listSubscriptions(agentId: string, query: { limit: number; cursor?: string | undefined }): Result<Page<Subscription>> {
    if (!this.parts.subscriptions.agentLifecycle(agentId)) return failure("not_found", "agent not found");
    return cursorPage(query.cursor, textKeyCursor, (after) => this.parts.subscriptions.list(agentId, query.limit, after));
  }

  deleteSubscription(agentId: string, subscriptionId: string): Result<{ subscription: Subscription }> {
    if (!this.parts.subscriptions.agentLifecycle(agentId)) return failure("not_found", "agent not found");
    const subscription = this.parts.subscriptions.remove(agentId, subscriptionId);
    return subscription ? { ok: true, subscription } : failure("not_found", "subscription not found");
  }

  /** `POST /v1/events`: record once per (source, deliveryId), then dispatch (also on a duplicate, which heals a failed dispatch). */
  async ingestEvent(body: IngestEventBody): Promise<EventIngest> {
    const result = this.parts.inboundEvents.record(body);
    if (result.ok) await this.dispatchPending();
    return result;
  }

  /** `POST /v1/agents/:id/trigger`: provision (returns the active descriptor), rotate or revoke. */
  async manageTrigger(actor: string, agentId: string, action: TriggerAction, requestKey?: string): Promise<TriggerOutcome> {
    const result = await this.parts.triggers.manage(agentId, action, requestKey);
    if (result.ok && result.changed) this.audit(actor, `trigger.${result.reason ?? action}`, result.trigger.triggerId, { agentId });
    return result;
  }

  /** Trigger ingress: verifies the token hash; with a delivery id, also records the delivery. */
  admitTriggerDelivery(triggerId: string, tokenHash: string, deliveryId: string | null): TriggerAdmission {
    return this.parts.triggers.admitDelivery(triggerId, tokenHash, deliveryId);
  }

  async createWebhookSource(actor: string, body: CreateWebhookSourceBody, requestKey?: string): Promise<SourceCreation> {
    const result = await this.parts.webhookSources.create(body, requestKey);
    if (result.ok && result.created) this.audit(actor, "webhook_source.created", result.source.id, { scheme: result.source.scheme, secretGenerated: body.secret === undefined });
    return result;
  }

  listWebhookSources(query: { limit: number; cursor?: string | undefined }): Result<Page<WebhookSourceRecord>> {
    return cursorPage(query.cursor, textKeyCursor, (after) => this.parts.webhookSources.list(query.limit, after));
  }

  getWebhookSource(id: string): Result<{ source: WebhookSourceRecord }> {
    const source = this.parts.webhookSources.get(id);
    return source ? { ok: true, source } : failure("not_found", "webhook source not found");
  }

  deleteWebhookSource(actor: string, id: string): Result<{ source: WebhookSourceRecord }> {
    const source = this.parts.webhookSources.delete(id);
    if (!source) return failure("not_found", "webhook source not found");
    this.audit(actor, "webhook_source.deleted", id, {});
    return { ok: true, source };
  }

  /** Source ingress: verify, record once, then dispatch (also on a duplicate, which heals a failed dispatch). */
  async receiveWebhook(delivery: SourceDelivery): Promise<SourceIngest> {
    const result = await this.parts.webhookSources.receive(delivery);
    if (result.ok) await this.dispatchPending();
    return result;
  }

  /** Bench seam (VIGIL_BENCH=enabled only): bulk subscriptions, dry-run matching, counts (bench/alertness.mjs). */
  benchAlertness(op: AlertnessBenchOp): Result<{ answer: AlertnessBenchAnswer }> {
    if (this.env.VIGIL_BENCH !== "enabled") return failure("not_found", "no such route");
    return runAlertnessBenchOp({ db: this.parts.db, dispatcher: this.parts.dispatcher, subscribe: (agentId, spec) => this.createSubscription(agentId, spec) }, op);
  }
}
