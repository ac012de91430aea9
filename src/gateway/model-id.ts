/**
 * How a `provider:model` id names a policy endpoint (src/schema/admin/policy.ts `ProviderEndpoint.id`):
 * `openai:<m>`, `anthropic:<m>`, `workers-ai:<m>` use the endpoint of that id;
 * `openai-compatible:<endpoint>/<m>` names the endpoint, and `openai-compatible:<endpoint>` means
 * that endpoint's first allowed model (`model: null`).
 */
export type ParsedModelId =
  | { provider: "builtin"; endpointId: null; model: string }
  | { provider: "openai" | "anthropic" | "workers-ai" | "openai-compatible"; endpointId: string; model: string | null };

export function parseModelId(modelId: string): ParsedModelId | null {
  const at = modelId.indexOf(":");
  if (at <= 0) return null;
  const provider = modelId.slice(0, at);
  const rest = modelId.slice(at + 1);
  if (!rest) return null;
  switch (provider) {
    case "builtin":
      return { provider, endpointId: null, model: rest };
    case "openai":
    case "anthropic":
    case "workers-ai":
      return { provider, endpointId: provider, model: rest };
    case "openai-compatible": {
      const slash = rest.indexOf("/");
      if (slash === 0) return null;
      return slash < 0 ? { provider, endpointId: rest, model: null } : { provider, endpointId: rest.slice(0, slash), model: rest.slice(slash + 1) || null };
    }
    default:
      return null;
  }
}
