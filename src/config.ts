/** Every default named once (ARCHITECTURE: "Configuration has one home"). */
export const config = {
  apiKeyPrefix: "vk_",
  defaultScopes: ["agents:read", "agents:write", "journal:read", "journal:write", "admin"] as const,
  jwt: { issuer: "vigil", audience: "vigil-widget", maxTtlSeconds: 3600, defaultTtlSeconds: 900 },
  /**
   * Credentials verified in the Worker (issue 12 §1): a per-isolate cache keyed by the API key's hash (and the
   * tenant's existence, for widget tokens) for at most `cacheTtlMs`; a key revoked elsewhere stops working within it.
   */
  /** negativeTtlMs: how long a refused credential or an unknown tenant is answered from the Worker alone. */
  auth: { cacheTtlMs: 30_000, cacheMaxEntries: 10_000, negativeTtlMs: 10_000 },
  rateLimits: {
    /** Documents the `[[ratelimits]]` binding's limit in wrangler.toml (the binding enforces it; this value is not read there). */
    requestsPerMinutePerKey: 100,
    turnsPerMinutePerAgent: 20,
    callsPerMinutePerAgentTool: 60,
  },
  run: {
    maxStepsPerRun: 8,
    /** A run interrupted this many times (crash, eviction) ends failed_terminal instead of resuming. */
    maxAttempts: 3,
    /** Hot window read to build a run's context: bounded whatever the agent's age. */
    contextWindowMessages: 40,
    /** Autonomous wakes merged into one run at most (each keeps its own runKey and terminal row). */
    maxCoalescedWakes: 20,
    /** How long after a wake the DO re-checks for interrupted work (survives restarts). */
    watchdogSeconds: 30,
    /**
     * How long the wake consumer's delivery waits for its run's report to be acknowledged before it answers with the
     * watchdog armed instead (a slow tenant must not hold the consumer's batch: ./objects/agent/wakes/delivery.ts).
     */
    deliveryReportWaitMs: 2_000,
    /** While any tool call waits on a saga, the agent re-checks its sagas at this interval (lost or errored ones settle). */
    sagaWatchSeconds: 30,
    /**
     * Agents woken by each other's activity form a chain (A's run wakes B, B's wakes A, …); a batch this
     * many agent hops from the original cause wakes nobody (audited), so a mutual subscription cannot loop forever.
     */
    maxCascadeDepth: 8,
  },
  sse: { heartbeatMs: 15_000, replayBatch: 500 },
  /** MCP server (`POST /v1/mcp`): how long `send_message` waits for the reply before answering `in_progress`. */
  mcpServer: { defaultWaitSeconds: 30, maxWaitSeconds: 60 },
  pagination: { defaultLimit: 50, maxLimit: 200 },
  /**
   * Idempotency-Key records are kept retentionHours; a claim whose request never completed (killed between
   * claim and answer) holds the key for leaseSeconds only, then a retry takes it over.
   */
  idempotency: { retentionHours: 24, leaseSeconds: 60 },
  /**
   * Every table that grows with use has a bound (issue 12 §5; tenant policy `retention` overrides field by field).
   * Pruning runs on alarms, at most `batchRows` rows per table per pass (a pass that hits it continues soon after),
   * every `intervalSeconds` while there is anything to prune. History (messages, summaries, runs, audit, reports) is kept.
   */
  retention: {
    agentEvents: { maxAgeDays: 7, maxRows: 100_000 },
    tenantEvents: { maxAgeDays: 7, maxRows: 1_000_000 },
    dedupeWindowDays: 7,
    idempotencyHours: 24,
    webhookDeliveriesDays: 30,
    compactionJobsDays: 7,
    /** The agent's scheduler decisions (one per timer tick): kept by age and row cap, not tenant-overridable. */
    schedulerDecisions: { maxAgeDays: 30, maxRows: 10_000 },
    batchRows: 500,
    intervalSeconds: 3_600,
  },
  /** Inbound webhooks (trigger and source ingress): raw bodies above this answer 413. */
  ingress: { maxBodyBytes: 65_536 },
  /** Tenant HTTP tools: per-call timeout, response cap (bytes), tools per tenant, input schema size (bytes). */
  /**
   * The egress door (src/egress/): redirects a GET may follow (each hop re-checked against the allowlist and the
   * mode; other methods never follow one); identity-provider JWKS: fetch timeout, key-set cache age, and the shortest
   * gap between two refetches forced by an unknown `kid`; how long the Worker keeps a tenant's IdP settings.
   */
  egress: { maxRedirects: 3 },
  /**
   * OpenTelemetry export (issue 15): one OTLP/HTTP request per finished run, sent after the run ended;
   * attempts in all (429/502/503/504 and transport errors are retried after backoffMs·2^(n-1)), per-attempt
   * timeout, spans per run (the rest are dropped and counted), characters of one opted-in body attribute,
   * and how long an agent reuses the tenant's export target before asking again.
   */
  telemetry: { maxAttempts: 3, backoffMs: 500, timeoutMs: 5_000, maxSpansPerRun: 512, maxBodyChars: 4_096, targetTtlMs: 30_000 },
  jwks: { timeoutMs: 5_000, cacheMaxAgeMs: 600_000, cooldownMs: 30_000, settingsTtlMs: 30_000 },
  tenantTools: { timeoutMs: 10_000, maxResponseBytes: 65_536, maxPerTenant: 100, maxInputSchemaBytes: 32_768 },
  /**
   * Remote MCP servers (issue 15.1): servers per tenant, tools kept per server, the tool-list cache's
   * TTL (a `notifications/tools/list_changed` marks it stale sooner), per-request timeouts, and the
   * largest call result kept (it becomes the toolResult the model reads).
   */
  mcp: { maxServersPerTenant: 20, maxToolsPerServer: 100, toolsTtlMs: 300_000, requestTimeoutMs: 10_000, callTimeoutMs: 30_000, maxResultBytes: 65_536 },
  /**
   * Outbound webhooks: attempts in all (then `dead`), exponential backoff base·2^(n-1) capped at
   * maxDelaySeconds (30 s, 1 min, 2 min … ≈ 1 h 04 min between the first and the 8th attempt),
   * per-attempt timeout, endpoints per tenant. Tests shrink the schedule with VIGIL_OUTBOUND_RETRY.
   */
  outboundWebhooks: { maxAttempts: 8, baseDelaySeconds: 30, maxDelaySeconds: 3_600, timeoutMs: 10_000, maxPerTenant: 50 },
  /**
   * Decisions (seed 002 ticks): one tick of a decision's timeout policy lasts `tickMs` (a test shrinks it per tenant
   * through the TenantDO seam `setDecisionTickMs`, VIGIL_FAULTS only); a null timeout re-arms its wait every `idleWaitMs`.
   */
  decisions: { tickMs: 60_000, idleWaitMs: 7 * 24 * 3_600_000 },
  /** A destroyed agent's soft-deleted history is kept this long, then erased (tests force it via the AgentDO seam `forceErasure`, VIGIL_FAULTS only). */
  erasure: { softDeleteSeconds: 7 * 86_400 },
  defaultModel: "builtin:echo",
  defaultSessionId: "default",
  /**
   * Interactive sessions (SPEC §3): an open session with no user turn for `idleTtlSeconds` closes
   * (`session.closed`, reason idle_timeout); the tenant policy's `sessions.idleTtlSeconds` overrides it.
   * The expiry alarm closes at most `expiryBatch` sessions per firing.
   */
  sessions: { idleTtlSeconds: 1_800, expiryBatch: 100 },
  /**
   * The tenant snapshot an agent keeps (issue 12 §2): policy, brakes, budgets' limits and HTTP tools. The tenant
   * pushes every new version; `maxAgeSeconds` bounds how long a snapshot is trusted if a push was lost (then the
   * agent asks again at its next run). Pushes go out `pushConcurrency` agents at a time.
   */
  snapshot: { maxAgeSeconds: 300, pushConcurrency: 32 },
} as const;

export type Scope = (typeof config.defaultScopes)[number];
export const SCOPES = config.defaultScopes;

export type RateLimits = { -readonly [K in keyof typeof config.rateLimits]: number };

/**
 * Deployment override of the rate limits (`VIGIL_RATE_LIMITS` = JSON, e.g. for a load test);
 * unknown keys and non-positive values are ignored so a typo cannot disable limiting.
 */
export function rateLimitsFrom(raw: string | undefined): RateLimits {
  const limits: RateLimits = { ...config.rateLimits };
  if (!raw) return limits;
  try {
    const parsed = JSON.parse(raw) as Record<string, unknown>;
    for (const key of Object.keys(limits) as Array<keyof RateLimits>) {
      const value = parsed[key];
      if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) limits[key] = value;
    }
  } catch {
    // malformed override: keep the defaults
  }
  return limits;
}
