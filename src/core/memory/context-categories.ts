/**
 * The journal categories whose data a model context carries (the inference gate's first step):
 * every `categoryId` (string) and `categoryIds` (string array) in structured content — tool
 * results, observation data — including JSON embedded in text on a line of its own (how the run
 * loop shows an observation's data to the model). Pure; the gate compares them with the agent's scope.
 */
const MAX_DEPTH = 64;

export function categoryIdsIn(value: unknown): string[] {
  const found = new Set<string>();
  collect(value, found, 0);
  return [...found].sort();
}

function collect(value: unknown, found: Set<string>, depth: number): void {
  if (depth > MAX_DEPTH) return;
  if (typeof value === "string") {
    for (const embedded of embeddedJson(value)) collect(embedded, found, depth + 1);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) collect(item, found, depth + 1);
    return;
  }
  if (value === null || typeof value !== "object") return;
  // The model's own tool-call arguments name categories it asked for; they carry no data of them
  // (a refused out-of-scope call must not poison the rest of the run).
  if ((value as { type?: unknown }).type === "tool-call") return;
  for (const [key, child] of Object.entries(value)) {
    if (key === "categoryId" && typeof child === "string") found.add(child);
    else if (key === "categoryIds" && Array.isArray(child)) for (const id of child) if (typeof id === "string") found.add(id);
    collect(child, found, depth + 1);
  }
}

/** JSON objects or arrays written on lines of their own inside a text. */
function embeddedJson(text: string): unknown[] {
  if (!text.includes("categoryId")) return [];
  const out: unknown[] = [];
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (!(trimmed.startsWith("{") || trimmed.startsWith("["))) continue;
    try {
      out.push(JSON.parse(trimmed));
    } catch {
      // Not JSON after all: plain text carries no structured category.
    }
  }
  return out;
}

/** The context's categories outside the agent's scope (empty: the context is in scope). */
export function outOfScopeCategories(contextCategoryIds: readonly string[], allowedCategoryIds: readonly string[]): string[] {
  const allowed = new Set(allowedCategoryIds);
  return contextCategoryIds.filter((id) => !allowed.has(id));
}
