/**
 * A remote language model for one granted (endpoint, model), built on the `ai` SDK providers with
 * the gateway's fetch: NEED_TO_KNOW projection of the request body, then the egress door (only the
 * endpoint's host; the final guard on the exact bytes). The decrypted key lives only in this
 * provider instance, for this call.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { allowlist, guardPayload, project, type InferenceOperation } from "../core/egress/need-to-know";
import { withheldFoundIn } from "../core/memory/extension-slots";
import { DEFAULT_BASE_URLS } from "../core/governance/policy-rules";
import type { InferenceGrant, ProviderKind } from "../schema/admin/policy";
import type { DeploymentMode } from "../core/egress/deployment-mode";
import type { EgressRecord } from "../egress";
import { createEgressFetch } from "./egress-fetch";
import { GatewayError } from "./errors";

export interface RemoteModelOptions {
  mode: DeploymentMode;
  /** Where each request through the egress door is recorded. */
  record?: (entry: EgressRecord) => void;
  /** Test seam (VIGIL_FAULTS only): adds a field after the projection, as a projection bug would. */
  injectOvershare?: boolean;
  /** The underlying fetch (the runtime's by default). */
  fetch?: typeof fetch;
  /** Strings the bytes must not carry (withheld extension slot values); the final guard refuses a body holding one. */
  withheld?: ReadonlyArray<{ key: string; needle: string }>;
}

export interface RemoteModel {
  model: LanguageModelV4;
  operation: InferenceOperation;
  host: string;
}

export function operationFor(kind: ProviderKind): InferenceOperation {
  return kind === "anthropic" ? "anthropic_messages" : "openai_chat_completions";
}

export function remoteModel(grant: InferenceGrant, options: RemoteModelOptions): RemoteModel {
  const { endpoint } = grant;
  const baseUrl = endpoint.baseUrl ?? DEFAULT_BASE_URLS[endpoint.kind];
  const host = baseUrl ? safeHost(baseUrl) : null;
  if (!baseUrl || !host) throw new GatewayError("provider_not_allowed", `provider endpoint '${endpoint.id}' has no usable base URL`, "grant");
  const operation = operationFor(endpoint.kind);
  const fields = allowlist("provider_inference_request", operation);
  const door = createEgressFetch({
    allowedHosts: [host],
    mode: options.mode,
    ...(options.record && { record: options.record }),
    guard: (body, text) => {
      const verdict = guardPayload(body, fields);
      if (!verdict.ok) return verdict;
      const leaked = options.withheld ? withheldFoundIn(text, options.withheld) : [];
      return leaked.length === 0 ? verdict : { ok: false, fields: leaked.map((key) => `extension.${key} (not modelVisible)`) };
    },
    ...(options.fetch && { fetch: options.fetch }),
  });
  const projected: typeof fetch = (input, init) => door(input, { ...init, body: projectBody(init?.body, fields, options.injectOvershare === true) });
  const apiKey = grant.apiKey ?? undefined;
  switch (endpoint.kind) {
    case "openai":
      return { model: createOpenAI({ baseURL: baseUrl, apiKey: apiKey ?? "", fetch: projected }).chat(grant.model), operation, host };
    case "anthropic":
      return { model: createAnthropic({ baseURL: baseUrl, apiKey: apiKey ?? "", fetch: projected })(grant.model), operation, host };
    case "openai-compatible":
    case "workers-ai":
      // Workers AI is reached through its account's OpenAI-compatible endpoint (the policy's baseUrl).
      return {
        model: createOpenAICompatible({ name: endpoint.id, baseURL: baseUrl, ...(apiKey !== undefined && { apiKey }), includeUsage: true, fetch: projected }).chatModel(grant.model),
        operation,
        host,
      };
  }
}

/** A JSON body rebuilt from the allowlist; anything else passes unchanged (the guard then refuses it). */
function projectBody(body: BodyInit | null | undefined, fields: readonly string[], injectOvershare: boolean): BodyInit | null | undefined {
  if (typeof body !== "string") return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  const { payload } = project(parsed, fields);
  if (injectOvershare && payload && typeof payload === "object") (payload as Record<string, unknown>).vigil_debug_context = { note: "injected by the overshare test seam" };
  return JSON.stringify(payload);
}

function safeHost(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}
