import { WEBHOOK_EVENT_TYPES } from "./need-to-know-webhooks";

/**
 * Outbound webhook rules: which endpoint wants which event, and when a failed delivery is
 * tried again. Pure; the TenantDO records the decisions and the queue consumer carries them out.
 */

/** `*`, an exact event type, or `<prefix>.*` (e.g. `run.*`) over the deliverable types. */
export function validateEventTypeFilter(filter: string): string | null {
  if (filter === "*") return null;
  if (filter.endsWith(".*")) {
    const prefix = filter.slice(0, -1);
    return WEBHOOK_EVENT_TYPES.some((type) => type.startsWith(prefix)) ? null : `${filter} matches no deliverable event type`;
  }
  return WEBHOOK_EVENT_TYPES.includes(filter) ? null : `${filter} is not a deliverable event type (one of ${WEBHOOK_EVENT_TYPES.join(", ")}, a prefix like run.*, or *)`;
}

export function matchesEventType(filters: readonly string[], type: string): boolean {
  if (!WEBHOOK_EVENT_TYPES.includes(type)) return false;
  return filters.some((filter) => filter === "*" || filter === type || (filter.endsWith(".*") && type.startsWith(filter.slice(0, -1))));
}

export interface RetrySchedule {
  /** Attempts in all, the first included; after the last failure the delivery is `dead`. */
  maxAttempts: number;
  baseDelaySeconds: number;
  maxDelaySeconds: number;
}

/** The delay before attempt `failedAttempts + 1`: `base · 2^(failedAttempts-1)`, capped. */
export function retryDelaySeconds(failedAttempts: number, schedule: RetrySchedule): number {
  const exponent = Math.max(0, failedAttempts - 1);
  return Math.min(schedule.maxDelaySeconds, schedule.baseDelaySeconds * 2 ** Math.min(exponent, 30));
}

export type AttemptOutcome = { ok: true; status: number } | { ok: false; status: number | null; error: string };

export type DeliveryStep = { status: "delivered" } | { status: "retry"; delaySeconds: number } | { status: "dead" };

/** After attempt number `attempt` (1-based) ended with `outcome`: done, again later, or give up. */
export function nextDeliveryStep(attempt: number, outcome: AttemptOutcome, schedule: RetrySchedule): DeliveryStep {
  if (outcome.ok) return { status: "delivered" };
  if (attempt >= schedule.maxAttempts) return { status: "dead" };
  return { status: "retry", delaySeconds: retryDelaySeconds(attempt, schedule) };
}

/** A receiver accepted the delivery: any 2xx. Redirects are not followed, so a 3xx is a failure. */
export function isAccepted(status: number): boolean {
  return status >= 200 && status < 300;
}

/**
 * The retry schedule for this deployment: the defaults, or (only where the fault seam is enabled,
 * i.e. tests) a JSON override such as `{"maxAttempts":3,"baseDelaySeconds":0}`. Bad values are ignored.
 */
export function retryScheduleFrom(defaults: RetrySchedule, raw: string | undefined, overridesAllowed: boolean): RetrySchedule {
  const schedule = { ...defaults };
  if (!raw || !overridesAllowed) return schedule;
  try {
    const parsed = JSON.parse(raw) as Record<string, unknown>;
    const maxAttempts = parsed.maxAttempts;
    if (typeof maxAttempts === "number" && Number.isSafeInteger(maxAttempts) && maxAttempts >= 1 && maxAttempts <= 20) schedule.maxAttempts = maxAttempts;
    for (const key of ["baseDelaySeconds", "maxDelaySeconds"] as const) {
      const value = parsed[key];
      if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0 && value <= 43_200) schedule[key] = value;
    }
  } catch {
    // malformed override: keep the defaults
  }
  return schedule;
}

/**
 * Agent events forwarded to the tenant-wide stream: everything persisted except the
 * agent's own bookkeeping (`wake.enqueued`, `agent.changed`); `text.delta` is live-only and never persisted.
 */
const FORWARDED_PREFIXES = ["run.", "tool.", "decision.", "session."];
const FORWARDED_TYPES = new Set(["message.appended", "lifecycle.changed", "state.changed", "report.published"]);

export function isTenantStreamEvent(type: string): boolean {
  return FORWARDED_TYPES.has(type) || FORWARDED_PREFIXES.some((prefix) => type.startsWith(prefix));
}
