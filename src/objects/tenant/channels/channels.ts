import type { Result } from "../../../core/runtime/result";
import type { Page } from "../../../schema/common";
import type { CreateWebhookBody, WebhookDelivery, WebhookEndpoint } from "../../../schema/admin/outbound-webhooks";
import { AdminResources } from "../../shared/admin-resources";
import { cursorPage, textKeyCursor } from "../../shared/paging";
import type { Audit } from "../types";
import type { OutboundDeliveries } from "./outbound-webhooks";
import type { EndpointCreation, WebhookEndpoints } from "./webhook-endpoints";

/** The tenant's outbound webhook endpoints and their deliveries, as the API manages them (changes audited). */
export class OutboundChannels {
  private readonly endpoints: AdminResources<WebhookEndpoint, "endpoint">;

  constructor(private readonly deps: { endpoints: WebhookEndpoints; outbound: OutboundDeliveries; audit: Audit }) {
    this.endpoints = new AdminResources(deps.endpoints, { key: "endpoint", noun: "webhook", deleted: "webhook.deleted" }, deps.audit);
  }

  async createWebhook(actor: string, body: CreateWebhookBody, requestKey?: string): Promise<EndpointCreation> {
    const result = await this.deps.endpoints.create(body, requestKey);
    if (result.ok && result.created) this.deps.audit(actor, "webhook.created", result.endpoint.id, { host: new URL(result.endpoint.url).host, eventTypes: result.endpoint.eventTypes });
    return result;
  }

  listWebhooks(query: { limit: number; cursor?: string | undefined }): Result<Page<WebhookEndpoint>> {
    return this.endpoints.list(query);
  }

  getWebhook(id: string): Result<{ endpoint: WebhookEndpoint }> {
    return this.endpoints.get(id);
  }

  deleteWebhook(actor: string, id: string): Result<{ endpoint: WebhookEndpoint }> {
    return this.endpoints.delete(actor, id);
  }

  listDeliveries(endpointId: string, query: { limit: number; cursor?: string | undefined }): Result<Page<WebhookDelivery>> {
    return cursorPage(query.cursor, textKeyCursor, (before) => this.deps.outbound.list(endpointId, query.limit, before));
  }
}
