/**
 * NEED_TO_KNOW across the delegation boundaries (seed 000 §4.1.4): what a child receives
 * (`agent_spawn_input`) and what its parent gets back (`agent_to_agent_handoff`, the child's
 * result). Each boundary has an allowlist; fields not on it are dropped by the projection, and a
 * final guard re-reads the projected bytes and blocks (`overshared_payload_blocked`) anything that
 * is still not allowed or too large. A child never inherits its parent's memory or transcript.
 */

export const DELEGATION_BOUNDARIES = {
  agent_spawn_input: { fields: ["goal", "inputRefs", "allowedCategoryIds", "allowedTools"], maxBytes: 16_384 },
  agent_to_agent_handoff: { fields: ["childId", "childRunKey", "status", "errorCode", "reply"], maxBytes: 8_192 },
} as const;
export type DelegationBoundary = keyof typeof DELEGATION_BOUNDARIES;

/** A child's reply is cut to this many characters before it crosses back (its summary, not a transcript). */
export const MAX_CHILD_REPLY_CHARS = 4_000;

export type Projection =
  | { ok: true; boundary: DelegationBoundary; payload: Record<string, unknown>; dropped: string[] }
  | { ok: false; code: "overshared_payload_blocked"; boundary: DelegationBoundary; violations: string[] };

/** Keeps the allowlisted top-level fields of `source` (in allowlist order), drops the rest, then guards. */
export function projectForBoundary(boundary: DelegationBoundary, source: Record<string, unknown>): Projection {
  const allowed: readonly string[] = DELEGATION_BOUNDARIES[boundary].fields;
  const payload: Record<string, unknown> = {};
  for (const field of allowed) if (Object.hasOwn(source, field) && source[field] !== undefined) payload[field] = source[field];
  const dropped = Object.keys(source).filter((field) => !allowed.includes(field)).sort();
  const guarded = guardBoundaryPayload(boundary, payload);
  return guarded.ok ? { ok: true, boundary, payload: guarded.payload, dropped } : guarded;
}

/**
 * The final guard: serializes the payload, parses it back and checks every top-level field against
 * the allowlist and the size cap. Anything else (a field added later by mistake, a huge goal) is
 * blocked, never trimmed.
 */
export function guardBoundaryPayload(boundary: DelegationBoundary, payload: Record<string, unknown>): { ok: true; payload: Record<string, unknown> } | Extract<Projection, { ok: false }> {
  const { fields, maxBytes } = DELEGATION_BOUNDARIES[boundary];
  let text: string;
  try {
    text = JSON.stringify(payload);
  } catch {
    return { ok: false, code: "overshared_payload_blocked", boundary, violations: ["payload is not JSON"] };
  }
  const parsed = JSON.parse(text) as Record<string, unknown>;
  const violations = Object.keys(parsed)
    .filter((field) => !(fields as readonly string[]).includes(field))
    .map((field) => `field ${field} is not allowed across ${boundary}`);
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > maxBytes) violations.push(`payload is ${bytes} bytes; ${boundary} allows ${maxBytes}`);
  return violations.length > 0 ? { ok: false, code: "overshared_payload_blocked", boundary, violations } : { ok: true, payload: parsed };
}

/** The child's result as its parent may see it: status, error code and the final reply, cut to size. */
export function projectChildResult(result: { childId: string; childRunKey: string; status: string; errorCode: string | null; reply: string | null }): Projection {
  const reply = result.reply === null ? null : result.reply.length > MAX_CHILD_REPLY_CHARS ? `${result.reply.slice(0, MAX_CHILD_REPLY_CHARS)}…` : result.reply;
  return projectForBoundary("agent_to_agent_handoff", { ...result, reply });
}
