/**
 * NEED_TO_KNOW: every boundary builds its payload from an allowlist of field paths —
 * fields not on the list are dropped — and a final guard checks that the fields of the bytes about
 * to leave are a subset of `allowlist(boundary, operation, version)`. Pure; the gateway applies it.
 *
 * Paths name object keys with `.` and array elements with `[]` (`messages[].content`). An entry
 * ending in `.*` admits the whole subtree below it (a tool's JSON Schema, a tool call's arguments):
 * what is inside is the content the model needs, not metadata about the tenant or the run.
 */

export const NEED_TO_KNOW_VERSION = "ntk-1";

export type Boundary = "provider_inference_request";
/** The wire format of a provider request; several provider kinds share one. */
export type InferenceOperation = "openai_chat_completions" | "anthropic_messages";

const OPENAI_CHAT: readonly string[] = [
  "model",
  "stream",
  "stream_options.include_usage",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "tool_choice",
  "tool_choice.type",
  "tool_choice.function.name",
  "messages[].role",
  "messages[].content",
  "messages[].content[].type",
  "messages[].content[].text",
  "messages[].tool_calls[].id",
  "messages[].tool_calls[].type",
  "messages[].tool_calls[].function.name",
  "messages[].tool_calls[].function.arguments",
  "messages[].tool_call_id",
  "tools[].type",
  "tools[].function.name",
  "tools[].function.description",
  "tools[].function.parameters.*",
  "tools[].function.strict",
];

const ANTHROPIC_MESSAGES: readonly string[] = [
  "model",
  "stream",
  "max_tokens",
  "temperature",
  "system",
  "system[].type",
  "system[].text",
  "tool_choice.type",
  "tool_choice.name",
  "messages[].role",
  "messages[].content",
  "messages[].content[].type",
  "messages[].content[].text",
  "messages[].content[].id",
  "messages[].content[].name",
  "messages[].content[].input.*",
  "messages[].content[].tool_use_id",
  "messages[].content[].content",
  "messages[].content[].content[].type",
  "messages[].content[].content[].text",
  "messages[].content[].is_error",
  "tools[].name",
  "tools[].description",
  "tools[].input_schema.*",
];

const ALLOWLISTS: Record<string, Record<Boundary, Partial<Record<InferenceOperation, readonly string[]>>>> = {
  [NEED_TO_KNOW_VERSION]: { provider_inference_request: { openai_chat_completions: OPENAI_CHAT, anthropic_messages: ANTHROPIC_MESSAGES } },
};

/** The allowlist; an unknown version or operation allows nothing (deny by default). */
export function allowlist(boundary: Boundary, operation: string, version: string = NEED_TO_KNOW_VERSION): readonly string[] {
  return ALLOWLISTS[version]?.[boundary]?.[operation as InferenceOperation] ?? [];
}

/** Every leaf path of a JSON value (an empty object or array counts as a leaf), deduplicated, in first-seen order. */
export function fieldPaths(value: unknown): string[] {
  const out = new Set<string>();
  walkLeaves(value, "", (path) => out.add(path));
  return [...out];
}

function walkLeaves(value: unknown, path: string, emit: (path: string, emptyContainer: boolean) => void): void {
  if (Array.isArray(value)) {
    if (value.length === 0 && path !== "") emit(path, true);
    for (const item of value) walkLeaves(item, `${path}[]`, emit);
  } else if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0 && path !== "") emit(path, true);
    for (const [key, child] of entries) walkLeaves(child, path ? `${path}.${key}` : key, emit);
  } else if (path !== "") {
    emit(path, false);
  }
}

/** Whether `path` is on the list: equal to an entry, or inside an entry's `.*` subtree. */
export function isAllowed(path: string, list: readonly string[]): boolean {
  return list.includes(path) || inSubtree(path, list);
}

function inSubtree(path: string, list: readonly string[]): boolean {
  for (const entry of list) {
    if (!entry.endsWith(".*")) continue;
    const root = entry.slice(0, -2);
    if (path === root || path.startsWith(`${root}.`) || path.startsWith(`${root}[]`)) return true;
  }
  return false;
}

/** Whether `path` leads to something on the list (an object or array on the way to an allowed field). */
function isOnTheWay(path: string, list: readonly string[]): boolean {
  return list.some((entry) => entry.startsWith(`${path}.`) || entry.startsWith(`${path}[]`));
}

/** A leaf path the guard admits; an empty object or array on the way to allowed fields carries nothing. */
function admits(path: string, list: readonly string[], emptyContainer: boolean): boolean {
  return isAllowed(path, list) || (emptyContainer && isOnTheWay(path, list));
}

/** The payload with every field not on the list dropped; `dropped` names what was removed. */
export function project<T>(payload: T, list: readonly string[]): { payload: T; dropped: string[] } {
  const dropped = new Set<string>();
  const DROP = Symbol("drop");
  const keep = (value: unknown, path: string): unknown => {
    if (path !== "" && inSubtree(path, list)) return value;
    const container = value !== null && typeof value === "object";
    if (container && (path === "" || isOnTheWay(path, list) || list.includes(path))) {
      if (Array.isArray(value)) return value.map((item) => keep(item, `${path}[]`)).filter((item) => item !== DROP);
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(value)) {
        const kept = keep(child, path ? `${path}.${key}` : key);
        if (kept !== DROP) out[key] = kept;
      }
      return out;
    }
    if (!container && path !== "" && list.includes(path)) return value;
    dropped.add(path);
    return DROP;
  };
  const result = keep(payload, "");
  return { payload: (result === DROP ? {} : result) as T, dropped: [...dropped] };
}

export type GuardResult = { ok: true } | { ok: false; code: "overshared_payload_blocked"; fields: string[] };

/** The final guard: `fields(payload) ⊆ allowlist`; otherwise the call is blocked, naming the extra fields. */
export function guardPayload(payload: unknown, list: readonly string[]): GuardResult {
  const extra: string[] = [];
  walkLeaves(payload, "", (path, emptyContainer) => {
    if (!admits(path, list, emptyContainer) && !extra.includes(path)) extra.push(path);
  });
  return extra.length === 0 ? { ok: true } : { ok: false, code: "overshared_payload_blocked", fields: extra };
}
