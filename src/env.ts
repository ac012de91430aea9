import type { AgentDO } from "./objects/agent/agent-do";
import type { TenantDO } from "./objects/tenant/tenant-do";
import type { WakeJob } from "./schema/agents/wake";
import type { OutboundJob } from "./schema/admin/outbound-webhooks";
import type { ToolSagaParams } from "./workflows/tool-saga";

/** Bindings declared in wrangler.toml. */
export interface Env {
  AGENT: DurableObjectNamespace<AgentDO>;
  TENANT: DurableObjectNamespace<TenantDO>;
  WAKE_QUEUE: Queue<WakeJob>;
  /** Outbound webhook deliveries (one message per delivery attempt); consumer: src/queues/outbound-consumer.ts. */
  OUTBOUND_QUEUE: Queue<OutboundJob>;
  TOOL_SAGA: Workflow<ToolSagaParams>;
  VIGIL_ADMIN_TOKEN: string;
  VIGIL_MASTER_KEY: string;
  /** Earlier master keys still accepted for opening and verifying (comma-separated; docs/operations.md "Rotating the master key"). */
  VIGIL_MASTER_KEY_PREVIOUS?: string;
  /** "local" under `npm start` (and the tests' servers): egress may use http to loopback/private hosts. Anything else: deployed. */
  VIGIL_MODE?: string;
  /** Tests only: `enabled` (every test seam) or a comma-separated list of seam names (src/core/runtime/seams.ts). */
  VIGIL_FAULTS?: string;
  /** "enabled" only for `npm run bench`: exposes /__bench measurement routes. */
  VIGIL_BENCH?: string;
  /** JSON override of config.rateLimits for this deployment. */
  VIGIL_RATE_LIMITS?: string;
  /** Per-client request budget (wrangler.toml `[[ratelimits]]`, keyed by API key id or widget subject). */
  CLIENT_RATE_LIMITER?: RateLimit;
  /** Test setting (honoured only with the `settings` seam): a shorter credential cache TTL in ms (src/http/credential-cache.ts). */
  VIGIL_AUTH_CACHE_TTL_MS?: string;
  /** Log threshold: debug | info | warn | error (default info). */
  VIGIL_LOG_LEVEL?: string;
  /** Test seam (honoured only with the `faults` seam): comma-separated provider endpoint ids whose requests get a field the NEED_TO_KNOW guard must catch. */
  VIGIL_FAULT_OVERSHARE?: string;
  /** Test seam (honoured only with the `faults` seam): comma-separated MCP tool names (`mcp_<server>_<tool>`) whose calls crash the TenantDO after the server answered, before the answer is recorded. */
  VIGIL_FAULT_MCP_ABORT?: string;
  /** Test setting (honoured only with the `settings` seam): the JWKS unknown-`kid` refetch cooldown in ms (config.jwks.cooldownMs). */
  VIGIL_JWKS_COOLDOWN_MS?: string;
  /** JSON override of config.outboundWebhooks retry schedule ({maxAttempts, baseDelaySeconds, maxDelaySeconds}); honoured only with the `settings` seam. */
  VIGIL_OUTBOUND_RETRY?: string;
}
