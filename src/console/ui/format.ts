/** Formatting for people: times, durations, money and token counts. Pure; no DOM. */

export function when(iso: string | null | undefined, timeZone?: string): string {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const options: Intl.DateTimeFormatOptions = { dateStyle: "medium", timeStyle: "medium" };
  if (timeZone) options.timeZone = timeZone;
  try {
    return new Intl.DateTimeFormat(undefined, options).format(date);
  } catch {
    return date.toISOString();
  }
}

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "never";
  const ms = now - new Date(iso).getTime();
  if (Number.isNaN(ms)) return iso;
  const future = ms < 0;
  const s = Math.abs(ms) / 1000;
  const text =
    s < 60
      ? `${Math.round(s)} s`
      : s < 3600
        ? `${Math.round(s / 60)} min`
        : s < 86400
          ? `${Math.round(s / 3600)} h`
          : `${Math.round(s / 86400)} d`;
  return future ? `in ${text}` : `${text} ago`;
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function runDuration(run: {
  startedAt: string | null;
  endedAt: string | null;
  trace: Record<string, unknown>;
}): string {
  const latency = run.trace.latencyMs;
  if (typeof latency === "number") return duration(latency);
  if (run.startedAt && run.endedAt)
    return duration(new Date(run.endedAt).getTime() - new Date(run.startedAt).getTime());
  return run.startedAt ? "running" : "—";
}

/** Micro-USD as dollars: `$0.0123`. */
export function usd(micros: number | null | undefined): string {
  if (micros === null || micros === undefined) return "—";
  const dollars = micros / 1_000_000;
  return `$${dollars < 1 ? dollars.toFixed(4) : dollars.toFixed(2)}`;
}

export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : new Intl.NumberFormat().format(value);
}

/** A run trace's token total, whichever of its two usage views is present. */
export function traceTokens(trace: Record<string, unknown>): number | null {
  const tokens = trace.tokens as { total?: unknown } | undefined;
  if (tokens && typeof tokens.total === "number") return tokens.total;
  const usage = trace.usage as { inputTokens?: unknown; outputTokens?: unknown } | undefined;
  if (usage && typeof usage.inputTokens === "number" && typeof usage.outputTokens === "number")
    return usage.inputTokens + usage.outputTokens;
  return null;
}

export function traceCost(trace: Record<string, unknown>): number | null {
  if (typeof trace.costMicros === "number") return trace.costMicros;
  const usage = trace.usage as { costMicros?: unknown } | undefined;
  return usage && typeof usage.costMicros === "number" ? usage.costMicros : null;
}

/** Any JSON value as short text for a table cell. */
export function plain(value: unknown, max = 200): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "string") return value.length > max ? `${value.slice(0, max - 1)}…` : value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  const text = JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `camelCase` / `snake_case` keys as words: `newTaskTitle` → "New task title". */
export function label(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .trim()
    .toLowerCase();
  return words ? words[0]!.toUpperCase() + words.slice(1) : key;
}
