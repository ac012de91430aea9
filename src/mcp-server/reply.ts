/** How `send_message` waits for a turn's reply: it reads the run's own event stream, bounded by a deadline. */

export type TurnStatus = "completed" | "failed" | "waiting_for_decision" | "in_progress";

export interface TurnOutcome {
  runKey: string;
  /** `in_progress`: the wait ended first; the reply lands in the history later (get_history). */
  status: TurnStatus;
  /** The run's final assistant text, when it replied. */
  reply: string | null;
  runStatus: string | null;
  errorCode: string | null;
  /** The decision the run waits on (an approval or an ask_user question), for resolve_decision. */
  decisionId: string | null;
  /** The run a `merge`d message was folded into: its reply is that run's. */
  coalescedInto: string | null;
}

interface Frame {
  event: string;
  data: { type?: string; runKey?: string | null; data?: Record<string, unknown> } | null;
}

/** Parses complete SSE frames off the front of `buffer`; returns them and what is left. */
export function takeFrames(buffer: string): { frames: Frame[]; rest: string } {
  const blocks = buffer.split("\n\n");
  const rest = blocks.pop() ?? "";
  const frames: Frame[] = [];
  for (const block of blocks) {
    let event = "";
    let data: Frame["data"] = null;
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) {
        try {
          data = JSON.parse(line.slice(6)) as Frame["data"];
        } catch {
          data = null;
        }
      }
    }
    if (event) frames.push({ event, data });
  }
  return { frames, rest };
}

/**
 * Folds one frame into the outcome; true when the wait is over. A run that asks a person (an approval, ask_user)
 * will not answer before someone resolves the decision, so the wait ends there too.
 */
function apply(outcome: TurnOutcome, frame: Frame): boolean {
  const payload = frame.data?.data ?? {};
  if (frame.event === "message.appended") {
    const message = payload.message as { kind?: string; text?: string } | undefined;
    if (message?.kind === "assistant" && typeof message.text === "string" && message.text) outcome.reply = message.text;
    return false;
  }
  if (frame.event === "decision.requested") {
    outcome.status = "waiting_for_decision";
    outcome.decisionId = typeof payload.decisionId === "string" ? payload.decisionId : null;
    return true;
  }
  if (frame.event === "run.completed" || frame.event === "run.failed") {
    const run = payload.run as { status?: string; trace?: { coalescedInto?: string } } | undefined;
    outcome.runStatus = typeof payload.status === "string" ? payload.status : (run?.status ?? null);
    outcome.errorCode = typeof payload.errorCode === "string" ? payload.errorCode : null;
    outcome.coalescedInto = run?.trace?.coalescedInto ?? null;
    outcome.status = outcome.runStatus === "completed" ? "completed" : "failed";
    return true;
  }
  return false;
}

/** Reads `stream` (the run's SSE, from submitTurn) until the run ends, asks a person, or `timeoutMs` passes. */
export async function awaitTurn(stream: ReadableStream<Uint8Array>, runKey: string, timeoutMs: number): Promise<TurnOutcome> {
  const outcome: TurnOutcome = { runKey, status: "in_progress", reply: null, runStatus: null, errorCode: null, decisionId: null, coalescedInto: null };
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const deadline = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs);
  });
  let buffer = "";
  try {
    for (;;) {
      const chunk = await Promise.race([reader.read(), deadline]);
      if (chunk === null || chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      const parsed = takeFrames(buffer);
      buffer = parsed.rest;
      if (parsed.frames.some((frame) => apply(outcome, frame))) break;
    }
  } finally {
    if (timer !== null) clearTimeout(timer);
    await reader.cancel().catch(() => undefined);
  }
  return outcome;
}
