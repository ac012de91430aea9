import type { ReconnectPolicy } from "./sse";

// ---------------------------------------------------------------------------------------------
// Records as the API returns them (SPEC §10: camelCase JSON, ISO-8601 UTC timestamps).
// ---------------------------------------------------------------------------------------------

export type Scope = "agents:read" | "agents:write" | "journal:read" | "journal:write" | "admin";
export type Lifecycle = "created" | "active" | "dormant" | "destroyed";
export type AgentMode = "autonomous" | "interactive" | "hybrid";
export type MessageKind = "observation" | "user" | "assistant" | "thought" | "action" | "toolResult" | "summary" | "system";
export type RunStatus = "queued" | "running" | "waiting" | "ready" | "completed" | "skipped_sleeping" | "skipped_destroyed" | "failed_terminal";
export type WakeReason = "subscription" | "timer" | "userInitiated" | "recoveryCatchup" | "manual" | "webhook" | "toolResult" | "child";

export const TERMINAL_RUN_STATUSES: ReadonlyArray<RunStatus> = ["completed", "skipped_sleeping", "skipped_destroyed", "failed_terminal"];

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export interface Tenant {
  id: string;
  name: string;
  timeZone: string;
  createdAt: string;
}

export interface ApiKeyInfo {
  id: string;
  name: string | null;
  prefix: string;
  scopes: Scope[];
  createdAt: string;
  revokedAt: string | null;
}

export interface PlaybookRule {
  when?: { reason?: WakeReason; textPattern?: string };
  reply: string;
}

export interface Playbook {
  rules: PlaybookRule[];
  fallbackReply?: string;
}

export interface ModelOptions {
  /** builtin models: delay between streamed words. */
  chunkDelayMs?: number;
}

export interface Agent {
  id: string;
  kind: string;
  displayName: string;
  lifecycle: Lifecycle;
  mode: AgentMode;
  allowedCategoryIds: string[];
  config: { modelId: string; instructions: string | null; playbook: Playbook | null; modelOptions: ModelOptions };
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface AgentState {
  revision: number;
  lastWakeAt: string | null;
  nextWakeAt: string | null;
  sleepUntil: string | null;
  recentHeadMessageId: string | null;
  latestSummaryMessageId: string | null;
  consecutiveFailureCount: number;
  slots: Record<string, unknown>;
}

export interface Message {
  id: string;
  agentId: string;
  threadId: string;
  kind: MessageKind;
  text?: string;
  content?: unknown;
  createdAt: string;
  metadata: Record<string, unknown>;
}

export interface Run {
  runKey: string;
  reason: WakeReason;
  threadId: string;
  status: RunStatus;
  attempt: number;
  enqueuedAt: string;
  startedAt: string | null;
  endedAt: string | null;
  errorCode: string | null;
  trace: Record<string, unknown>;
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

export interface CreateWebhookInput {
  /** https (plain http only to loopback on test deployments). */
  url: string;
  /** `*`, event types (`run.completed`, `decision.requested`, …) or prefixes (`run.*`). */
  eventTypes: string[];
  description?: string;
}

export interface WebhookEndpoint {
  id: string;
  url: string;
  eventTypes: string[];
  description: string | null;
  createdAt: string;
}

export interface CreatedWebhookEndpoint extends WebhookEndpoint {
  /** Verifies `Vigil-Signature`; shown only in the creation answer. */
  secret: string;
}

export interface WebhookDelivery {
  /** Also the `Vigil-Delivery-Id` header, the same on every attempt. */
  id: string;
  endpointId: string;
  eventSeq: number;
  eventType: string;
  status: "pending" | "delivered" | "dead" | "blocked";
  attempts: number;
  errorCode: string | null;
  attemptLog: Array<{ attempt: number; at: string; outcome: "delivered" | "failed"; httpStatus: number | null; error: string | null; durationMs: number }>;
  createdAt: string;
  updatedAt: string;
}

export interface CreateTenantInput {
  name: string;
  timeZone?: string;
}

export interface CreateKeyInput {
  name?: string;
  scopes?: Scope[];
}

export interface MintTokenInput {
  sub: string;
  agents: string[];
  scope?: Array<"agents:read" | "agents:write">;
  ttlSeconds?: number;
}

export interface CreateAgentInput {
  kind: string;
  displayName: string;
  mode?: AgentMode;
  allowedCategoryIds?: string[];
  instructions?: string;
  /** `provider:model`, default `builtin:echo`. */
  model?: string;
  modelOptions?: ModelOptions;
  playbook?: Playbook;
  /** `false` creates the agent in `created` (not yet accepting work). */
  start?: boolean;
}

export interface PatchAgentInput {
  displayName?: string;
  mode?: AgentMode;
  allowedCategoryIds?: string[];
  instructions?: string | null;
  model?: string;
  modelOptions?: ModelOptions;
  playbook?: Playbook | null;
  /** Optimistic concurrency: the change applies only if the agent is still at this version. */
  version?: number;
}

export interface SendMessageInput {
  text: string;
  sessionId?: string;
}

export interface ListOptions {
  limit?: number;
  cursor?: string;
}

/** Problem document (RFC 9457) with Vigil's stable `code`. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: Array<{ path: string; message: string }>;
}

export interface RequestOptions {
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
