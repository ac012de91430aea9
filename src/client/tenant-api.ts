import type { VigilOperations } from "./api.generated.js";
import { FrameStream, ResumableSse, type SseFrame } from "./sse.js";
import type { CreateWebhookInput, CreatedWebhookEndpoint, ListOptions, Page, RequestOptions, StreamOptions, TenantEvent, WebhookDelivery, WebhookEndpoint } from "./types.js";

/** What the tenant-level helpers need from the client: its transport. */
export interface Transport {
  send(method: string, path: string, body?: unknown, options?: RequestOptions): Promise<Response>;
  toError(response: Response): Promise<Error>;
}

/** The tenant-wide event stream; `lastEventId` is where a later stream can continue. */
export class TenantEventStream extends FrameStream<TenantEvent> {
  constructor(sse: ResumableSse) {
    super(sse, toTenantEvent);
  }
}

/**
 * `GET /v1/events/stream`: every agent's persisted events (and tenant-level ones), replayed after
 * `after` then live; reconnects with `Last-Event-ID` and never yields an event twice.
 */
export function tenantEventStream(transport: Transport, options: StreamOptions & { after?: number | string; agentId?: string } = {}): TenantEventStream {
  const query = options.agentId === undefined ? "" : `?agentId=${encodeURIComponent(options.agentId)}`;
  const sse = new ResumableSse({
    lastEventId: options.after === undefined ? undefined : String(options.after),
    signal: options.signal,
    reconnect: options.reconnect,
    onCursorExpired: options.onCursorExpired,
    toError: (response) => transport.toError(response),
    connect: ({ lastEventId, signal }) => {
      const headers: Record<string, string> = { accept: "text/event-stream" };
      if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
      return transport.send("GET", `/v1/events/stream${query}`, undefined, { headers, signal });
    },
  });
  return new TenantEventStream(sse);
}

/** Outbound webhooks (`/v1/webhooks`, API key with the `admin` scope). */
export interface WebhooksApi {
  /** The endpoint and its signing secret — the only time the secret is shown. */
  create(input: CreateWebhookInput, options?: RequestOptions): Promise<CreatedWebhookEndpoint>;
  list(query?: ListOptions, options?: RequestOptions): Promise<Page<WebhookEndpoint>>;
  get(webhookId: string, options?: RequestOptions): Promise<WebhookEndpoint>;
  delete(webhookId: string, options?: RequestOptions): Promise<WebhookEndpoint>;
  /** The delivery log, newest first: status and every attempt. */
  deliveries(webhookId: string, query?: ListOptions, options?: RequestOptions): Promise<Page<WebhookDelivery>>;
}

/** The `webhooks` namespace over the generated operations (kept for its shorter names). */
export function webhooksApi(operations: Pick<VigilOperations, "createWebhook" | "listWebhooks" | "getWebhook" | "deleteWebhook" | "listWebhookDeliveries">): WebhooksApi {
  return {
    create: (input, options) => operations.createWebhook(input, options),
    list: (query = {}, options) => operations.listWebhooks(query, options),
    get: (id, options) => operations.getWebhook(id, options),
    delete: (id, options) => operations.deleteWebhook(id, options),
    deliveries: (id, query = {}, options) => operations.listWebhookDeliveries(id, query, options),
  };
}

function toTenantEvent(frame: SseFrame): TenantEvent {
  let payload: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(frame.data) as unknown;
    if (parsed && typeof parsed === "object") payload = parsed as Record<string, unknown>;
  } catch {
    payload = { raw: frame.data };
  }
  const str = (value: unknown) => (typeof value === "string" ? value : null);
  return {
    seq: typeof payload.seq === "number" ? payload.seq : frame.id !== undefined && /^\d+$/.test(frame.id) ? Number(frame.id) : null,
    type: str(payload.type) ?? frame.event,
    agentId: str(payload.agentId),
    agentSeq: typeof payload.agentSeq === "number" ? payload.agentSeq : null,
    runKey: str(payload.runKey),
    data: payload.data && typeof payload.data === "object" ? (payload.data as Record<string, unknown>) : {},
    createdAt: str(payload.createdAt),
  };
}
