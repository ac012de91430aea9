import { z } from "@hono/zod-openapi";
import { budgetLimitsSchema } from "../../core/governance/budget";
import { EXTENSION_REGISTRY_LIMITS } from "../../core/memory/extension-slots";
import { EXTENSION_KEY_PATTERN, SLOT_LIMITS } from "../../core/memory/slots";
import { decisionTimeoutPolicySchema } from "../../core/governance/decision";
import { retentionOverridesSchema } from "../../core/memory/retention";
import { trustCalibrationConfigSchema } from "../../core/governance/trust";
import { IsoTimestamp } from "../common";

export const PROVIDER_KINDS = ["openai", "anthropic", "openai-compatible", "workers-ai"] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** USD per million tokens; cost is accounted in integer micro-USD from these. */
export const ModelPricing = z.object({ inputUsdPerMTok: z.number().min(0).max(10_000), outputUsdPerMTok: z.number().min(0).max(10_000) }).strict();

/**
 * One provider endpoint the tenant allows. `id` is the provider part of model ids: `openai`,
 * `anthropic`, `workers-ai`, or the name of an openai-compatible endpoint (`openai-compatible:<id>/<model>`).
 * Its host is the only provider host egress may reach.
 */
export const ProviderEndpoint = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, "lowercase letters, digits and -"),
    kind: z.enum(PROVIDER_KINDS),
    /** Required for openai-compatible and workers-ai (its account's OpenAI-compatible URL); defaults to the vendor's API otherwise. */
    baseUrl: z.string().url().max(500).optional(),
    secretRefId: z.string().max(100).optional(),
    /** The provider's data policy version the tenant consents to; a new version re-requires consent. */
    policyVersion: z.string().min(1).max(64),
    /** Model names allowed on this endpoint. */
    models: z.array(z.string().min(1).max(200)).min(1).max(50),
    pricing: z.record(z.string(), ModelPricing).default({}),
    /** Per-attempt timeout. */
    timeoutMs: z.number().int().min(100).max(120_000).default(30_000),
  })
  .strict()
  .openapi("ProviderEndpoint");
export type ProviderEndpoint = z.infer<typeof ProviderEndpoint>;

export const TrustPolicy = z
  .object({ profile: z.enum(["conservative", "balanced", "permissive"]).default("balanced"), overrides: trustCalibrationConfigSchema.default({}) })
  .strict()
  .refine((trust) => (trust.overrides.floorScore ?? 10) <= (trust.overrides.ceilingScore ?? 100), { message: "floorScore must be <= ceilingScore", path: ["overrides", "floorScore"] });

/**
 * The tenant's own identity provider for widget users (SPEC §2): tokens signed RS256/ES256 by a key
 * in `jwksUrl`'s key set, with this `issuer` and `audience`, carrying `tid` (this tenant's id) and
 * `sub`. Its users may reach `agentIds` (narrowed further by an `agents` claim, if the token has
 * one) with `scopes`. The JWKS host joins the tenant's egress allowlist; the key set is fetched
 * through the egress door.
 */
export const IdentityProvider = z
  .object({
    jwksUrl: z.string().url().max(500),
    issuer: z.string().min(1).max(500),
    audience: z.string().min(1).max(500),
    algorithms: z.array(z.enum(["RS256", "ES256"])).min(1).default(["RS256", "ES256"]),
    agentIds: z.array(z.string().min(1).max(100)).max(100).default([]),
    scopes: z.array(z.enum(["agents:read", "agents:write"])).min(1).default(["agents:read", "agents:write"]),
  })
  .strict()
  .openapi("IdentityProvider");
export type IdentityProvider = z.infer<typeof IdentityProvider>;
/** One registered extension slot key (SPEC §7): the value's JSON Schema (2020-12, checked on PUT) and its size cap. */
export const ExtensionSlotRegistration = z
  .object({
    schema: z.record(z.string(), z.unknown()).openapi({ description: "JSON Schema (2020-12) the key's value must satisfy; local $refs only" }),
    maxChars: z.number().int().min(1).max(SLOT_LIMITS.extensionMaxChars).default(1_024).openapi({ description: "largest canonical JSON of the value, in characters" }),
    description: z.string().max(500).optional(),
    modelVisible: z
      .boolean()
      .default(false)
      .openapi({ description: "whether the value may reach a model (NEED_TO_KNOW); false: it is kept out of every provider request, and a request carrying it is refused (overshared_payload_blocked)" }),
  })
  .strict()
  .openapi("ExtensionSlotRegistration");

/** Interactive sessions (SPEC §3): the inactivity TTL after which an open session closes (`session.closed`). */
export const SessionPolicy = z
  .object({ idleTtlSeconds: z.number().int().min(60).max(30 * 86_400).optional().openapi({ description: "overrides the deployment default (src/config.ts sessions.idleTtlSeconds)" }) })
  .strict()
  .openapi("SessionPolicy");

/**
 * OpenTelemetry export (SPEC §12, issue 15): each finished run's trace goes to this OTLP/HTTP traces
 * endpoint (JSON encoding), off the run's path. Its host joins the tenant's egress allowlist. Headers
 * (a collector's API key) come from a provider secret stored with `provider: "otlp"` whose value is
 * `key=value` pairs separated by commas (the OTEL_EXPORTER_OTLP_HEADERS format); they are never echoed.
 */
export const TelemetryPolicy = z
  .object({
    otlpEndpoint: z.string().url().max(500).openapi({ description: "The OTLP/HTTP traces URL, used as is (e.g. `https://collector.example.com/v1/traces`)", example: "https://otlp.example.com/v1/traces" }),
    headersSecretRefId: z.string().max(100).optional().openapi({ description: "A live provider secret stored for provider `otlp`: `key=value,key2=value2` headers sent with every export" }),
    includeBodies: z.boolean().default(false).openapi({ description: "Export message texts, tool arguments and results as span attributes (off by default)" }),
  })
  .strict()
  .openapi("TelemetryPolicy");
export type TelemetryPolicy = z.infer<typeof TelemetryPolicy>;

/** The tenant's governance policy (SPEC §5–§6); `version` increments on every PUT. */
export const PolicyBody = z
  .object({
    providers: z.array(ProviderEndpoint).max(20).default([]),
    /** When a category is listed, only these model ids (`provider:model`) may see its data. */
    categoryModels: z.record(z.string(), z.array(z.string().max(200)).max(50)).default({}),
    /** Default daily limits for every agent (tenant-local day); an agent's own budgets override per dimension. */
    budgets: budgetLimitsSchema.default({}),
    /** Per-tool calls per agent per day → `tool_quota_exceeded`. */
    toolQuotas: z.record(z.string(), z.number().int().min(0)).default({}),
    /** Per-tool calls per agent per minute → `rate_limited`. */
    toolRateLimits: z.record(z.string(), z.number().int().min(1)).default({}),
    /** Overrides of the seed 002 per-mode decision timeout policy. */
    decisionTimeouts: z.partialRecord(z.enum(["orchestrator", "adaptive", "ecosystem"]), decisionTimeoutPolicySchema).default({}),
    /** Seed 002 trust calibration: a profile preset plus overrides; `overrides.calibrationMode` freezes live scores. */
    trust: TrustPolicy.default({ profile: "balanced", overrides: {} }),
    /** Overrides of the retention bounds of `src/config.ts` (agent and tenant events, dedupe window, idempotency, deliveries, compaction jobs). */
    retention: retentionOverridesSchema.default({}),
    /** Widget users signed in with the tenant's own IdP (JWKS); absent: only Vigil-minted widget tokens. */
    identityProvider: IdentityProvider.optional(),
    /** Registered `extension` slot keys (`<namespace>.<name>`); the slots API and `memory_update_slot` validate against them. */
    extensionSlots: z
      .record(z.string().regex(EXTENSION_KEY_PATTERN, "extension keys are namespaced: <namespace>.<name>"), ExtensionSlotRegistration)
      .refine((slots) => Object.keys(slots).length <= EXTENSION_REGISTRY_LIMITS.maxKeys, `at most ${EXTENSION_REGISTRY_LIMITS.maxKeys} extension keys`)
      .default({}),
    /** Interactive session settings (inactivity TTL). */
    sessions: SessionPolicy.default({}),
    /** Tools whose approvals a visitor (widget or tenant-IdP token) may answer in their own session; operators answer all. */
    visitorApprovableTools: z
      .array(z.string().min(1).max(200))
      .max(200)
      .default([])
      .openapi({ description: "Tool names whose approval decisions a visitor may approve or reject in their own session (default: none; an API key answers every decision)" }),
    /** OpenTelemetry trace export; absent: no run traces leave Vigil. */
    telemetry: TelemetryPolicy.optional(),
  })
  .strict()
  .openapi("PolicyBody");
export type PolicyBody = z.infer<typeof PolicyBody>;

// Built from the shape, not `PolicyBody.extend`: the document renders an extension of a strict schema as an allOf
// whose parts each forbid the other's fields, which no policy satisfies.
const serverKept = { version: z.number().int().min(0), updatedAt: IsoTimestamp.nullable() };
export const Policy = z.object({ ...PolicyBody.shape, ...serverKept }).strict().openapi("Policy");
/**
 * What `PUT /v1/policy` takes: the policy fields, and what `GET` returned of the server-kept ones, so a read document
 * can be written back. `version` is a precondition (409 `version_conflict` unless the policy is still at it);
 * `updatedAt` is ignored.
 */
export const PolicyWrite = z
  .object({
    ...PolicyBody.shape,
    version: serverKept.version.optional().openapi({ description: "The version this write is based on: 409 version_conflict when the policy moved on" }),
    updatedAt: serverKept.updatedAt.optional().openapi({ description: "Kept by the server; ignored" }),
  })
  .strict()
  .openapi("PolicyWrite");
export type Policy = z.infer<typeof Policy>;

export const EMPTY_POLICY: Policy = { version: 0, updatedAt: null, providers: [], categoryModels: {}, budgets: {}, toolQuotas: {}, toolRateLimits: {}, decisionTimeouts: {}, trust: { profile: "balanced", overrides: {} }, retention: {}, extensionSlots: {}, sessions: {}, visitorApprovableTools: [] };

/** What the tenant hands an agent to export run traces (never leaves the runtime: it holds the decrypted headers). */
export interface TelemetryTarget {
  endpoint: string;
  headers: Record<string, string>;
  includeBodies: boolean;
  /** The policy version it came from (recorded with each export). */
  policyVersion: number;
}

/** What the tenant hands an agent for one inference call once every gate passed (never leaves the runtime). */
export interface InferenceGrant {
  endpoint: ProviderEndpoint;
  model: string;
  /** Decrypted provider key, or null when the endpoint needs none (a local openai-compatible server). */
  apiKey: string | null;
}
