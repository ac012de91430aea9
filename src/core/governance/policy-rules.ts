/**
 * The governance rules that zod alone cannot state: how a `PolicyBody` must hang
 * together before it is stored, and the inference gate's pure part — which endpoint and model a
 * `provider:model` id resolves to and whether the tenant allows it, in the spec's order. Pure:
 * secrets, consents and storage are the caller's.
 */
import type { DeploymentMode } from "../egress/deployment-mode";
import { checkUrlShape } from "../egress/egress";
import { parseModelId } from "../../gateway/model-id";
import type { PolicyBody, ProviderEndpoint, ProviderKind } from "../../schema/admin/policy";

export interface PolicyIssue {
  path: string;
  message: string;
}

/** Endpoint ids that name a vendor: model ids `openai:<m>`, `anthropic:<m>`, `workers-ai:<m>` resolve to them. */
const VENDOR_IDS: readonly string[] = ["openai", "anthropic", "workers-ai"];
/** The provider id OTLP header secrets are stored under (src/schema/admin/policy.ts TelemetryPolicy). */
export const OTLP_SECRET_PROVIDER = "otlp";
const RESERVED_IDS: readonly string[] = [...VENDOR_IDS, "builtin", "openai-compatible", OTLP_SECRET_PROVIDER];

/** Where a vendor endpoint without `baseUrl` sends its requests. */
export const DEFAULT_BASE_URLS: Partial<Record<ProviderKind, string>> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com/v1",
};

export interface PolicyCheckContext {
  /** Provider (endpoint id) of each live secret, by secretRefId; a missing id is unknown or revoked. */
  secretProviders: ReadonlyMap<string, string>;
  /** local (`npm start`): endpoints may be plain-http loopback/private servers (Ollama, vLLM); deployed: https to public hosts only. */
  mode: DeploymentMode;
}

/**
 * Every issue of a policy body, with field paths. An endpoint's id must be resolvable from a model
 * id of its kind (vendor ids carry their own kind; any other id is an openai-compatible endpoint),
 * so no model id can reach an endpoint of another kind. A secret may be referenced only by the
 * endpoint it was stored for: a key stored for one provider never travels to another host.
 */
export function checkPolicy(body: PolicyBody, context: PolicyCheckContext): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  const seen = new Set<string>();
  body.providers.forEach((endpoint, index) => {
    const at = (field: string) => `providers.${index}.${field}`;
    if (seen.has(endpoint.id)) issues.push({ path: at("id"), message: `endpoint id '${endpoint.id}' is listed twice` });
    seen.add(endpoint.id);
    if (endpoint.kind === "openai-compatible") {
      if (RESERVED_IDS.includes(endpoint.id)) issues.push({ path: at("id"), message: `'${endpoint.id}' is reserved; name an openai-compatible endpoint something else` });
    } else if (endpoint.id !== endpoint.kind) {
      issues.push({ path: at("id"), message: `a ${endpoint.kind} endpoint must have id '${endpoint.kind}' (model ids ${endpoint.kind}:<model> resolve to it)` });
    }
    if (endpoint.baseUrl === undefined) {
      if (!DEFAULT_BASE_URLS[endpoint.kind]) issues.push({ path: at("baseUrl"), message: `a ${endpoint.kind} endpoint needs a baseUrl` });
    } else {
      const shape = checkUrlShape(endpoint.baseUrl, context.mode);
      if (!shape.ok) issues.push({ path: at("baseUrl"), message: shape.message });
    }
    if (new Set(endpoint.models).size !== endpoint.models.length) issues.push({ path: at("models"), message: "a model is listed twice" });
    for (const model of Object.keys(endpoint.pricing)) {
      if (!endpoint.models.includes(model)) issues.push({ path: at(`pricing.${model}`), message: "prices a model the endpoint does not list" });
    }
    if (endpoint.secretRefId !== undefined) {
      const owner = context.secretProviders.get(endpoint.secretRefId);
      if (owner === undefined) issues.push({ path: at("secretRefId"), message: "no live provider secret has this id (POST /v1/providers/secrets first)" });
      else if (owner !== endpoint.id) issues.push({ path: at("secretRefId"), message: `this secret was stored for provider '${owner}', not '${endpoint.id}'` });
    }
  });
  if (body.identityProvider) {
    const shape = checkUrlShape(body.identityProvider.jwksUrl, context.mode);
    if (!shape.ok) issues.push({ path: "identityProvider.jwksUrl", message: shape.message });
  }
  if (body.telemetry) {
    const shape = checkUrlShape(body.telemetry.otlpEndpoint, context.mode);
    if (!shape.ok) issues.push({ path: "telemetry.otlpEndpoint", message: shape.message });
    const ref = body.telemetry.headersSecretRefId;
    if (ref !== undefined) {
      const owner = context.secretProviders.get(ref);
      if (owner === undefined) issues.push({ path: "telemetry.headersSecretRefId", message: `no live secret has this id (POST /v1/providers/secrets with provider '${OTLP_SECRET_PROVIDER}' first)` });
      else if (owner !== OTLP_SECRET_PROVIDER) issues.push({ path: "telemetry.headersSecretRefId", message: `this secret was stored for provider '${owner}', not '${OTLP_SECRET_PROVIDER}'` });
    }
  }
  for (const [categoryId, modelIds] of Object.entries(body.categoryModels)) {
    modelIds.forEach((modelId, index) => {
      const parsed = parseModelId(modelId);
      if (!parsed) issues.push({ path: `categoryModels.${categoryId}.${index}`, message: "not a provider:model id" });
    });
  }
  return issues;
}

export type GateDenial = { ok: false; code: "provider_not_allowed" | "model_not_allowed" | "privacy_confirmation_required"; message: string };
export type GateOutcome = { ok: true; endpoint: ProviderEndpoint; model: string } | GateDenial;

/** The one spelling of a resolved model id that categoryModels entries are compared in. */
export function canonicalModelId(endpoint: Pick<ProviderEndpoint, "id" | "kind">, model: string): string {
  return endpoint.kind === "openai-compatible" ? `openai-compatible:${endpoint.id}/${model}` : `${endpoint.kind}:${model}`;
}

/** Whether a categoryModels entry names this endpoint's model (`openai-compatible:<ep>` means its first model). */
function namesModel(entry: string, endpoint: ProviderEndpoint, model: string): boolean {
  const parsed = parseModelId(entry);
  return parsed !== null && parsed.provider === endpoint.kind && parsed.endpointId === endpoint.id && (parsed.model ?? endpoint.models[0]) === model;
}

/**
 * The policy part of the inference gate, in SPEC order: provider endpoint configured →
 * model allowed on it and for every restricted category → privacy receipt for the endpoint's
 * current policyVersion. (Scope is checked agent-side before; the secret and NEED_TO_KNOW after.)
 */
export function gateInference(
  policy: Pick<PolicyBody, "providers" | "categoryModels">,
  request: { modelId: string; categoryIds: readonly string[] },
  hasConsent: (endpointId: string, model: string, policyVersion: string) => boolean,
): GateOutcome {
  const parsed = parseModelId(request.modelId);
  if (!parsed || parsed.endpointId === null) {
    return { ok: false, code: "provider_not_allowed", message: `'${request.modelId}' does not name a provider endpoint (builtin models need no grant)` };
  }
  const endpoint = policy.providers.find((candidate) => candidate.id === parsed.endpointId && candidate.kind === parsed.provider);
  if (!endpoint) return { ok: false, code: "provider_not_allowed", message: `no ${parsed.provider} provider endpoint '${parsed.endpointId}' is configured in the tenant policy` };
  const model = parsed.model ?? endpoint.models[0]!;
  if (!endpoint.models.includes(model)) return { ok: false, code: "model_not_allowed", message: `model '${model}' is not allowed on endpoint '${endpoint.id}'` };
  for (const categoryId of request.categoryIds) {
    const allowed = policy.categoryModels[categoryId];
    if (allowed && !allowed.some((entry) => namesModel(entry, endpoint, model))) {
      return { ok: false, code: "model_not_allowed", message: `category '${categoryId}' does not allow model '${canonicalModelId(endpoint, model)}'` };
    }
  }
  if (!hasConsent(endpoint.id, model, endpoint.policyVersion)) {
    return {
      ok: false,
      code: "privacy_confirmation_required",
      message: `confirm provider '${endpoint.id}' model '${model}' under policyVersion '${endpoint.policyVersion}' (POST /v1/providers/consents) before the first call`,
    };
  }
  return { ok: true, endpoint, model };
}

/** `host[:port]` of every endpoint, as `URL.host` renders it (the egress allowlist compares exactly). */
export function endpointHosts(providers: readonly ProviderEndpoint[]): string[] {
  const hosts: string[] = [];
  for (const endpoint of providers) {
    const base = endpoint.baseUrl ?? DEFAULT_BASE_URLS[endpoint.kind];
    if (!base) continue;
    try {
      hosts.push(new URL(base).host);
    } catch {
      // checkPolicy refuses such a URL; an unparsable one allows nothing
    }
  }
  return hosts;
}
