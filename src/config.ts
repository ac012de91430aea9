/** Every default named once (ARCHITECTURE: "Configuration has one home"). */
export const config = {
  apiKeyPrefix: "vk_",
  defaultScopes: ["agents:read", "agents:write", "journal:read", "journal:write", "admin"] as const,
  jwt: { issuer: "vigil", audience: "vigil-widget", maxTtlSeconds: 3600, defaultTtlSeconds: 900 },
  rateLimits: {
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
     * Agents woken by each other's activity form a chain (A's run wakes B, B's wakes A, …); a batch this
     * many agent hops from the original cause wakes nobody (audited), so a mutual subscription cannot loop forever.
     */
    maxCascadeDepth: 8,
  },
  sse: { heartbeatMs: 15_000, replayBatch: 500 },
  pagination: { defaultLimit: 50, maxLimit: 200 },
  idempotency: { retentionHours: 24 },
  /** Inbound webhooks (trigger and source ingress): raw bodies above this answer 413. */
  ingress: { maxBodyBytes: 65_536 },
  /** Tenant HTTP tools: per-call timeout, response cap (bytes), tools per tenant, input schema size (bytes). */
  tenantTools: { timeoutMs: 10_000, maxResponseBytes: 65_536, maxPerTenant: 100, maxInputSchemaBytes: 32_768 },
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
