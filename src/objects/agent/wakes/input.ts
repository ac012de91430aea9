/** What a wake brings into a run: its input messages, what the model learns about the wake, and the ids they get. */
import { H } from "../../../core/ids/hash";
import { replyMessageIdOf } from "../rows";
import { observationTitle } from "../../../core/wakes/observation-title";
import { tokenKey, type TypedToken } from "../../../core/wakes/tokens";
import { wakeProvenance, type Provenance } from "../../../core/wakes/provenance";
import type { WakeContext } from "../../../gateway/resolve";
import type { History } from "../memory";
import type { InboxItem } from "./inbox";

/** Deterministic ids of the messages one run appends: a resumed run finds, never duplicates, them. */
export const runMessageIds = {
  input: (runKey: string) => H(runKey, "input"),
  observation: (runKey: string) => H(runKey, "observation"),
  reply: replyMessageIdOf, // shared with the lean run trace, which restores a reply id from it
  modelFailure: (runKey: string, step: number) => H(runKey, "system", "model", step),
};

/** The wake's provenance (authority as admitted, trust and origin derived from it and the wake reason). */
export const provenanceOf = (wake: Pick<InboxItem, "authority" | "reason">): Provenance => wakeProvenance(wake.authority, wake.reason);

/**
 * Appends what a wake brought (a person's text, or an observation) to the thread the run answers in, each message
 * labelled with its provenance: a person (operator or channel) speaks as `user`, anything else is an observation.
 */
export function appendWakeInput(history: History, wake: InboxItem, threadId: string): void {
  const text = typeof wake.input.text === "string" ? wake.input.text : undefined;
  const { trust, origin } = provenanceOf(wake);
  if (text !== undefined) {
    history.append({
      id: runMessageIds.input(wake.runKey),
      threadId,
      kind: wake.authority === "external_evidence" && origin !== "channel" ? "observation" : "user",
      text,
      runKey: wake.runKey,
      authority: wake.authority,
      metadata: { trust, origin },
    });
  }
  const observation = readObservation(wake.input);
  if (observation) {
    // The line people see (widget, console) names titles; the model reads the summary with its ids.
    const title = observationTitle(observation.data);
    history.append({
      id: runMessageIds.observation(wake.runKey),
      threadId,
      kind: "observation",
      text: observation.summary,
      content: observation.data,
      runKey: wake.runKey,
      authority: wake.authority,
      metadata: { reason: wake.reason, trust, origin, ...(title ? { title } : {}) },
    });
  }
}

/**
 * What a non-conversational wake saw (a journal change, an event, a webhook payload): a one-line
 * summary for the model plus structured data. Its authority comes from admission, never the payload.
 */
export interface WakeObservation {
  summary: string;
  data?: unknown;
}

export function readObservation(input: Record<string, unknown>): WakeObservation | null {
  const observation = input.observation as Partial<WakeObservation> | undefined;
  if (!observation || typeof observation.summary !== "string") return null;
  return { summary: observation.summary, data: observation.data };
}

/** What the model gets to know about the wake itself; operator text only when admitted as such. */
export function wakeContext(item: InboxItem): WakeContext {
  const observation = readObservation(item.input);
  const data = observation?.data as { tokens?: TypedToken[] } | undefined;
  return {
    reason: item.reason,
    operatorText: item.authority === "operator_instruction" && typeof item.input.text === "string" ? item.input.text : null,
    observation: observation?.data ?? null,
    tokenKeys: Array.isArray(data?.tokens) ? data.tokens.map((token) => tokenKey(token)) : [],
  };
}

/** A wake with no new input (timer, manual, …) still tells the model why it woke, as a runtime instruction. */
export function withWakePrompt<T extends { role: string }>(messages: T[], item: InboxItem): Array<T | { role: "user"; content: string }> {
  if (typeof item.input.text === "string" || readObservation(item.input)) return messages;
  return [...messages, { role: "user", content: `[runtime] wake reason: ${item.reason}` }];
}

/** Agent hops between the wake's original cause and this run (0 unless another agent's activity woke it). */
export function cascadeDepthOf(item: InboxItem): number {
  const depth = item.input.cascadeDepth;
  return typeof depth === "number" && Number.isInteger(depth) && depth >= 0 ? depth : 0;
}
