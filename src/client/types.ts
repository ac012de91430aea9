import type { ReconnectPolicy } from "./sse.js";

import type * as Api from "./api.generated.js";

// ---------------------------------------------------------------------------------------------
// Records as the API returns them (SPEC §10: camelCase JSON, ISO-8601 UTC timestamps). Every type
// here is derived from the generated schema types (src/client/api.generated.ts, from the routes' zod
// schemas via GET /v1/openapi.json); these are the names the client has always exported.
// ---------------------------------------------------------------------------------------------

export type { Agent, AgentState, Message, Run, Tenant, WebhookEndpoint, CreatedWebhookEndpoint, WebhookDelivery } from "./api.generated.js";
export type ApiKeyInfo = Api.ApiKey;
export type Scope = Api.ApiKey["scopes"][number];
export type Lifecycle = Api.Agent["lifecycle"];
export type AgentMode = Api.Agent["mode"];
export type MessageKind = Api.Message["kind"];
export type RunStatus = Api.Run["status"];
export type WakeReason = Api.Run["reason"];
export type Playbook = NonNullable<Api.Agent["config"]["playbook"]>;
export type PlaybookRule = Playbook["rules"][number];
export type ModelOptions = Api.Agent["config"]["modelOptions"];
export type CreateWebhookInput = Api.CreateWebhook;
export type CreateTenantInput = Api.CreateTenant;
export type CreateKeyInput = Api.CreateKey;
export type MintTokenInput = Api.MintToken;
export type CreateAgentInput = Api.CreateAgent;
export type PatchAgentInput = Api.PatchAgent;
export type SendMessageInput = Api.PostMessage;
/** Problem document (RFC 9457) with Vigil's stable `code`. */
export type Problem = Api.Problem;

export const TERMINAL_RUN_STATUSES: ReadonlyArray<RunStatus> = ["completed", "skipped_sleeping", "skipped_destroyed", "failed_terminal", "interrupted"];

/** A page of a list: `nextCursor` continues it (`?cursor=`), null on the last page. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/**
 * One event from an SSE stream. Persisted events carry their `seq` (the SSE id, monotonic per
 * agent); live-only events such as `text.delta` have `seq: null` and are never replayed.
 */
export interface AgentEvent {
  seq: number | null;
  type: string;
  runKey: string | null;
  data: Record<string, unknown>;
  createdAt: string | null;
}

/** One event of the tenant-wide stream (`GET /v1/events/stream`): an agent's event tagged with its agent, or a tenant-level one. */
export interface TenantEvent {
  seq: number | null;
  type: string;
  agentId: string | null;
  /** The event's seq in its agent's own log; null for tenant-level events. */
  agentSeq: number | null;
  runKey: string | null;
  data: Record<string, unknown>;
  createdAt: string | null;
}

export interface ListOptions {
  limit?: number;
  cursor?: string;
}

export interface RequestOptions {
  /** The body as bytes, for operations without a JSON body (signed webhook deliveries: the signature covers these exact bytes). */
  rawBody?: NonNullable<RequestInit["body"]>;
  /** Same key + same body → same response and no second effect; a different body → 409. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

export interface StreamOptions {
  signal?: AbortSignal;
  reconnect?: ReconnectPolicy | false;
  /**
   * Event streams: the resume point was older than retention keeps (410 `cursor_expired`); the stream goes on
   * from `oldestSeq`, the oldest event still kept, and the events in between are gone.
   */
  onCursorExpired?: (gap: { lastEventId: string | undefined; oldestSeq: number }) => void;
}

export interface VigilClientOptions {
  /** e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** An API key (`vk_…`), a widget JWT, or — for `createTenant` — the operator token. */
  token?: string;
  /** A fetch implementation; defaults to the global one. */
  fetch?: typeof fetch;
}
