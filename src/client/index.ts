/** Typed client for the Vigil API: `new VigilClient({ baseUrl, token })`. Dependency-free; Node ≥ 20 and browsers. */
export { EventStream, RunStream, VigilApiError, VigilClient } from "./client.js";
/** Every operation as a method (generated), the operation table, and every schema type as `Api.Name`. */
export { OPERATIONS, VigilOperations, type OperationName } from "./api.generated.js";
export type * as Api from "./api.generated.js";
export { TenantEventStream, type WebhooksApi } from "./tenant-api.js";
export {
  TERMINAL_RUN_STATUSES,
  type Agent,
  type AgentEvent,
  type AgentMode,
  type AgentState,
  type ApiKeyInfo,
  type CreateAgentInput,
  type CreateKeyInput,
  type CreateTenantInput,
  type CreateWebhookInput,
  type CreatedWebhookEndpoint,
  type TenantEvent,
  type WebhookDelivery,
  type WebhookEndpoint,
  type Lifecycle,
  type ListOptions,
  type Message,
  type MessageKind,
  type MintTokenInput,
  type ModelOptions,
  type Page,
  type PatchAgentInput,
  type Playbook,
  type PlaybookRule,
  type Problem,
  type RequestOptions,
  type Run,
  type RunStatus,
  type Scope,
  type SendMessageInput,
  type StreamOptions,
  type Tenant,
  type VigilClientOptions,
  type WakeReason,
} from "./types.js";
export { readSse, ResumableSse, type ReconnectPolicy, type ResumableSseOptions, type SseFrame } from "./sse.js";
