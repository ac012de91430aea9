import { count, eq, sql } from "drizzle-orm";
import { extensionValidators, type ExtensionSlotRegistry } from "../../../core/memory/extension-slots";
import { applySlotUpdate, emptySlots, parseSlots, type AgentSlots, type SlotIssue, type SlotKey } from "../../../core/memory/slots";
import * as schema from "../../../db/agent-schema";
import { failure, type Failure, type Result } from "../../../core/runtime/result";
import type { EventLog } from "../events";
import type { AgentProfile } from "../lifecycle";
import type { AgentDb } from "../types";

/** The memory overview: slots with their versions, and how much history the agent holds. */
export interface MemoryView {
  slots: AgentSlots;
  counts: { messages: number; summaries: number };
  /** Compaction (src/objects/agent/compaction.ts): job counts by status, the agent's summary pointer, divergence diagnostics. */
  compaction: { pending: number; running: number; done: number; failedTerminal: number; latestSummaryMessageId: string | null; diagnostics: number };
}

export type SlotWrite = { ok: true; slot: SlotKey; version: number; changed: boolean } | Failure | { ok: false; code: "invalid_slot"; message: string; issues: SlotIssue[] };

function currentSlots(profile: AgentProfile): AgentSlots {
  const parsed = parseSlots(profile.state()?.slots ?? {});
  return parsed.ok ? parsed.slots : emptySlots();
}

export function readMemory(db: AgentDb, profile: AgentProfile): Result<{ memory: MemoryView }> {
  if (!profile.get()) return failure("not_found", "agent not found");
  const messages = db.select({ n: count() }).from(schema.messages).get()?.n ?? 0;
  const summaries = db.select({ n: count() }).from(schema.messages).where(eq(schema.messages.kind, "summary")).get()?.n ?? 0;
  const jobs = new Map(
    db.select({ status: schema.compactionJobs.status, n: count() }).from(schema.compactionJobs).groupBy(schema.compactionJobs.status).all().map((row) => [row.status, row.n]),
  );
  const compaction = {
    pending: jobs.get("pending") ?? 0,
    running: jobs.get("running") ?? 0,
    done: jobs.get("done") ?? 0,
    failedTerminal: jobs.get("failed_terminal") ?? 0,
    latestSummaryMessageId: profile.state()?.latestSummaryMessageId ?? null,
    diagnostics: db.select({ n: sql<number>`count(*)` }).from(schema.memoryDiagnostics).get()?.n ?? 0,
  };
  return { ok: true, memory: { slots: currentSlots(profile), counts: { messages, summaries }, compaction } };
}

/**
 * The one slot write of both writers, the API (`PUT …/memory/slots/:key`) and `memory_update_slot`: versions,
 * idempotent no-op, validation, with `extension` keys checked against the tenant's registry (`extensionSlots`).
 */
export function writeSlot(
  profile: AgentProfile,
  events: EventLog,
  key: string,
  value: unknown,
  expectedVersion: number | undefined,
  options: { registry: ExtensionSlotRegistry; runKey?: string | null },
): SlotWrite {
  const agent = profile.get();
  if (!agent) return failure("not_found", "agent not found");
  if (agent.lifecycle === "destroyed") return failure("agent_destroyed", "the agent is destroyed and cannot change");
  const update = applySlotUpdate(currentSlots(profile), key, value, expectedVersion, { extensionSchemas: extensionValidators(options.registry) });
  if (!update.ok) {
    if (update.code === "version_conflict") {
      return failure("version_conflict", `slot ${update.key} is at version ${update.actualVersion}, the request expected ${update.expectedVersion}`);
    }
    const message = update.issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join("; ");
    return { ok: false, code: "invalid_slot", message: `invalid ${update.key}: ${message}`, issues: update.issues };
  }
  if (update.changed) events.append("state.changed", options.runKey ?? null, { state: profile.writeSlots(update.slots as unknown as Record<string, unknown>) });
  return { ok: true, slot: update.key, version: update.version, changed: update.changed };
}
