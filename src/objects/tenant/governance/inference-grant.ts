/**
 * The tenant half of the inference gate: policy checks in spec order (`gateInference`),
 * then the provider secret. Every denial is audited (agent, model id, code — never key material);
 * a grant is not, since it happens on every model call. The grant carries the decrypted key to the
 * tenant's own agent and must never be persisted or logged there.
 */
import { gateInference } from "../../../core/governance/policy-rules";
import { failure, type Result } from "../../../core/runtime/result";
import type { InferenceGrant, Policy } from "../../../schema/admin/policy";
import type { ProviderConsents } from "./consents";
import type { ProviderSecrets } from "./provider-secrets";

export interface InferenceGrantRequest {
  agentId: string;
  modelId: string;
  /** The agent's allowed categories (the data this call may carry). */
  categoryIds: string[];
}

export interface InferenceGrantDeps {
  policy: () => Policy;
  consents: ProviderConsents;
  secrets: ProviderSecrets;
  audit: (actor: string, action: string, target: string | null, detail: Record<string, unknown>) => void;
}

/** Kinds whose vendor API always needs a key; an openai-compatible endpoint (a local Ollama, vLLM) may run keyless. */
const KEY_REQUIRED = new Set(["openai", "anthropic", "workers-ai"]);

export async function resolveInferenceGrant(deps: InferenceGrantDeps, request: InferenceGrantRequest): Promise<Result<{ grant: InferenceGrant }>> {
  const deny = (code: Parameters<typeof failure>[0], message: string) => {
    deps.audit(`agent:${request.agentId}`, "policy.denied", request.modelId, { agentId: request.agentId, modelId: request.modelId, code });
    return failure(code, message);
  };
  const gate = gateInference(deps.policy(), request, (provider, model, policyVersion) => deps.consents.has(provider, model, policyVersion));
  if (!gate.ok) return deny(gate.code, gate.message);
  const { endpoint, model } = gate;
  if (endpoint.secretRefId !== undefined) {
    const opened = await deps.secrets.open(endpoint.secretRefId, endpoint.id);
    if (!opened.ok) return deny("secret_unavailable", opened.message);
    return { ok: true, grant: { endpoint, model, apiKey: opened.apiKey } };
  }
  if (KEY_REQUIRED.has(endpoint.kind)) return deny("secret_unavailable", `endpoint '${endpoint.id}' (${endpoint.kind}) has no secretRefId; store its key with POST /v1/providers/secrets and reference it`);
  return { ok: true, grant: { endpoint, model, apiKey: null } };
}
