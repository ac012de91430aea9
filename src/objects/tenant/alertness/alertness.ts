import { failure, type Result } from "../../../core/runtime/result";
import type { Page } from "../../../schema/common";
import type { IngestEventBody, Subscription, SubscriptionSpec } from "../../../schema/agents/subscriptions";
import type { CreateWebhookSourceBody, SourceDelivery, TriggerAction, WebhookSourceRecord } from "../../../schema/agents/webhooks";
import { AdminResources } from "../../shared/admin-resources";
import { cursorPage, textKeyCursor } from "../../shared/paging";
import type { Audit } from "../types";
import type { EventIngest, InboundEvents } from "./inbound-events";
import type { SubscriptionStore } from "./subscriptions";
import type { ExternalTriggers, TriggerAdmission, TriggerOutcome } from "./triggers";
import type { SourceCreation, SourceIngest, WebhookSources } from "./webhook-sources";

export interface AlertnessDeps {
  subscriptions: SubscriptionStore;
  inboundEvents: InboundEvents;
  triggers: ExternalTriggers;
  webhookSources: WebhookSources;
  audit: Audit;
  /** Queues a wake per subscription match of the batches just recorded (after their transaction committed). */
  dispatch(): Promise<void>;
}

/**
 * Alertness as the API sees it: agents' subscriptions, inbound events, external triggers and signed
 * webhook sources. Every ingress records once, then dispatches (also on a duplicate, which heals a
 * failed dispatch); every admin change is audited.
 */
export class Alertness {
  private readonly sources: AdminResources<WebhookSourceRecord, "source">;

  constructor(private readonly deps: AlertnessDeps) {
    this.sources = new AdminResources(deps.webhookSources, { key: "source", noun: "webhook source", deleted: "webhook_source.deleted" }, deps.audit);
  }

  listSubscriptions(agentId: string, query: { limit: number; cursor?: string | undefined }): Result<Page<Subscription>> {
    const { subscriptions } = this.deps;
    if (!subscriptions.agentLifecycle(agentId)) return failure("not_found", "agent not found");
    return cursorPage(query.cursor, textKeyCursor, (after) => subscriptions.list(agentId, query.limit, after));
  }

  subscribe(agentId: string, spec: SubscriptionSpec, keyedId?: string): Result<{ subscription: Subscription }> {
    return this.deps.subscriptions.subscribe(agentId, spec, keyedId);
  }

  unsubscribe(agentId: string, subscriptionId: string): Result<{ subscription: Subscription }> {
    const { subscriptions } = this.deps;
    if (!subscriptions.agentLifecycle(agentId)) return failure("not_found", "agent not found");
    const subscription = subscriptions.remove(agentId, subscriptionId);
    return subscription ? { ok: true, subscription } : failure("not_found", "subscription not found");
  }

  async ingestEvent(body: IngestEventBody): Promise<EventIngest> {
    const result = this.deps.inboundEvents.record(body);
    if (result.ok) await this.deps.dispatch();
    return result;
  }

  async manageTrigger(actor: string, agentId: string, action: TriggerAction, requestKey?: string): Promise<TriggerOutcome> {
    const result = await this.deps.triggers.manage(agentId, action, requestKey);
    if (result.ok && result.changed) this.deps.audit(actor, `trigger.${result.reason ?? action}`, result.trigger.triggerId, { agentId });
    return result;
  }

  admitTriggerDelivery(triggerId: string, tokenHash: string, deliveryId: string | null): TriggerAdmission {
    return this.deps.triggers.admitDelivery(triggerId, tokenHash, deliveryId);
  }

  async createWebhookSource(actor: string, body: CreateWebhookSourceBody, requestKey?: string): Promise<SourceCreation> {
    const result = await this.deps.webhookSources.create(body, requestKey);
    if (result.ok && result.created) this.deps.audit(actor, "webhook_source.created", result.source.id, { scheme: result.source.scheme, secretGenerated: body.secret === undefined });
    return result;
  }

  listWebhookSources(query: { limit: number; cursor?: string | undefined }): Result<Page<WebhookSourceRecord>> {
    return this.sources.list(query);
  }

  getWebhookSource(id: string): Result<{ source: WebhookSourceRecord }> {
    return this.sources.get(id);
  }

  deleteWebhookSource(actor: string, id: string): Result<{ source: WebhookSourceRecord }> {
    return this.sources.delete(actor, id);
  }

  async receiveWebhook(delivery: SourceDelivery): Promise<SourceIngest> {
    const result = await this.deps.webhookSources.receive(delivery);
    if (result.ok) await this.deps.dispatch();
    return result;
  }
}
