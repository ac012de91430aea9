/**
 * The chat's state as a pure, DOM-free model: history pages, persisted events (deduplicated by
 * message id and operation id), live text deltas (drafts per run and step) and decisions. The
 * element renders `entries` in order; every mutation bumps the changed entry's `version`.
 */
import { answerOf, decisionView, type DecisionView } from "./decision-view";

export interface ChatMessage {
  id: string;
  threadId: string;
  kind: string;
  text?: string | undefined;
  content?: unknown;
  createdAt: string;
  metadata?: Record<string, unknown> | undefined;
  runKey?: string | null | undefined;
}

export interface ChatEvent {
  seq: number | null;
  type: string;
  runKey: string | null;
  data: Record<string, unknown>;
}

export type Entry =
  | { key: string; version: number; type: "message"; role: "user" | "assistant" | "note"; text: string; runKey: string | null }
  | { key: string; version: number; type: "draft"; runKey: string; step: number; text: string }
  | { key: string; version: number; type: "tool"; operationId: string; toolName: string; status: "called" | "ok" | "failed"; code: string | null }
  | { key: string; version: number; type: "decision"; decision: DecisionView }
  | { key: string; version: number; type: "error"; text: string };

const VISIBLE_KINDS: Record<string, "user" | "assistant" | "note"> = { user: "user", assistant: "assistant", observation: "note" };

export class Transcript {
  readonly entries: Entry[] = [];
  /** Runs this conversation owns: started here, or seen writing into this thread. Deltas of other runs are not shown. */
  private readonly ownRuns = new Set<string>();
  /** Runs with a user turn sent but no terminal event yet (drives the "replying" indicator). */
  readonly pendingRuns = new Set<string>();
  private readonly seenMessages = new Set<string>();
  /** Runs already terminal: a POST answer that arrives after its run's end must not mark it pending again. */
  private readonly endedRuns = new Set<string>();

  constructor(readonly threadId: string) {}

  /** A page of history, newest first (as the API lists it), placed before everything shown so far. */
  addHistory(messages: ReadonlyArray<ChatMessage>): void {
    const older: Entry[] = [];
    for (const message of [...messages].reverse()) {
      if (message.threadId !== this.threadId || this.seenMessages.has(message.id)) continue;
      this.seenMessages.add(message.id);
      const runKey = message.runKey ?? null;
      if (runKey) this.ownRuns.add(runKey);
      const entry = this.entryFor(message);
      if (entry && !this.mergeTool(entry, older)) older.push(entry);
    }
    this.entries.unshift(...older);
  }

  /** A run this widget started (its POST answered with the runKey). */
  ownRun(runKey: string): void {
    this.ownRuns.add(runKey);
    if (!this.endedRuns.has(runKey)) this.pendingRuns.add(runKey);
  }

  /** Applies one event of the agent's stream; returns whether anything visible changed. */
  apply(event: ChatEvent): boolean {
    const runKey = event.runKey ?? (typeof event.data.runKey === "string" ? event.data.runKey : null);
    switch (event.type) {
      case "message.appended":
        return this.appendMessage(event.data.message as ChatMessage | undefined, runKey);
      case "text.delta":
        return runKey !== null && this.ownRuns.has(runKey) && this.delta(runKey, Number(event.data.step ?? 0), String(event.data.delta ?? ""));
      case "tool.called":
      case "tool.result":
        return runKey !== null && this.ownRuns.has(runKey) && this.tool(event);
      case "decision.requested":
        return this.upsertDecision({ id: event.data.decisionId, status: "pending", payload: event.data, type: event.data.type });
      case "decision.resolved":
        return typeof event.data.decisionId === "string" && this.closeDecision(event.data.decisionId, "resolved", this.answerFrom(event.data));
      case "run.completed":
      case "run.failed":
        return runKey !== null && this.endRun(runKey, event.type === "run.failed");
      default:
        return false;
    }
  }

  /** A decision from `GET /v1/decisions` or an event; re-applying one only refreshes it. */
  upsertDecision(raw: { id?: unknown; status?: unknown; type?: unknown; payload?: unknown; resolution?: unknown }): boolean {
    const view = decisionView(raw);
    if (!view) return false;
    if (view.threadId && view.threadId !== this.threadId) return false;
    const key = `decision:${view.id}`;
    const existing = this.find(key);
    if (!existing) {
      this.entries.push({ key, version: 0, type: "decision", decision: view });
      return true;
    }
    if (existing.type !== "decision") return false;
    // The event carries less than the listed record; keep what is known and never reopen a closed decision.
    const merged: DecisionView = { ...existing.decision, ...view, status: existing.decision.status === "pending" ? view.status : existing.decision.status };
    if (existing.decision.answer && !view.answer) merged.answer = existing.decision.answer;
    if (JSON.stringify(merged) === JSON.stringify(existing.decision)) return false;
    existing.decision = merged;
    existing.version++;
    return true;
  }

  /** Marks a decision answered or gone (`answer` says what was chosen, when known). */
  closeDecision(id: string, status: DecisionView["status"], answer?: string): boolean {
    const entry = this.find(`decision:${id}`);
    if (!entry || entry.type !== "decision" || entry.decision.status !== "pending") return false;
    entry.decision = { ...entry.decision, status, ...(answer ? { answer } : {}) };
    entry.version++;
    return true;
  }

  /** What a `decision.resolved` event says was chosen, in the words of that decision's buttons. */
  private answerFrom(data: Record<string, unknown>): string | undefined {
    const entry = this.find(`decision:${String(data.decisionId)}`);
    return entry && entry.type === "decision" ? answerOf(data, entry.decision) : undefined;
  }

  /** A decision listed as answered: a card shown here as pending learns the answer; none is added. */
  settleDecision(raw: { id?: unknown; status?: unknown; type?: unknown; payload?: unknown; resolution?: unknown }): boolean {
    const view = decisionView(raw);
    if (!view || view.status === "pending") return false;
    return this.closeDecision(view.id, view.status, view.answer);
  }

  /** Pending decisions shown here that the server no longer lists as pending were answered elsewhere. */
  reconcilePending(pendingIds: ReadonlySet<string>): boolean {
    let changed = false;
    for (const entry of this.entries) {
      if (entry.type === "decision" && entry.decision.status === "pending" && !pendingIds.has(entry.decision.id)) {
        changed = this.closeDecision(entry.decision.id, "closed") || changed;
      }
    }
    return changed;
  }

  error(text: string): void {
    this.entries.push({ key: `error:${this.entries.length}:${text}`, version: 0, type: "error", text });
  }

  private appendMessage(message: ChatMessage | undefined, runKey: string | null): boolean {
    if (!message || typeof message.id !== "string" || message.threadId !== this.threadId) return false;
    if (this.seenMessages.has(message.id)) return false;
    this.seenMessages.add(message.id);
    if (runKey) this.ownRuns.add(runKey);
    const entry = this.entryFor({ ...message, runKey });
    if (!entry) return false;
    if (entry.type === "tool") {
      if (!this.mergeTool(entry, this.entries)) this.entries.push(entry);
      return true;
    }
    // The reply that was streaming replaces its draft in place.
    const draft = entry.type === "message" && entry.role === "assistant" && runKey ? this.openDraft(runKey) : undefined;
    if (draft) this.entries[this.entries.indexOf(draft)] = entry;
    else this.entries.push(entry);
    return true;
  }

  private entryFor(message: ChatMessage): Entry | null {
    const metadata = message.metadata ?? {};
    if ((message.kind === "action" || message.kind === "toolResult") && typeof metadata.operationId === "string") {
      const ok = metadata.ok !== false;
      return {
        key: `tool:${metadata.operationId}`,
        version: 0,
        type: "tool",
        operationId: metadata.operationId,
        toolName: String(metadata.toolName ?? "tool"),
        status: message.kind === "action" ? "called" : ok ? "ok" : "failed",
        code: null,
      };
    }
    const role = VISIBLE_KINDS[message.kind];
    if (!role || !message.text) return null;
    // Notes (observations) show the server's title for people, which names tasks and categories, not their ids.
    const text = role === "note" && typeof metadata.title === "string" && metadata.title ? metadata.title : message.text;
    return { key: `message:${message.id}`, version: 0, type: "message", role, text, runKey: message.runKey ?? null };
  }

  private delta(runKey: string, step: number, text: string): boolean {
    if (!text) return false;
    const key = `draft:${runKey}:${step}`;
    const draft = this.find(key);
    if (draft && draft.type === "draft") {
      draft.text += text;
      draft.version++;
    } else {
      this.entries.push({ key, version: 0, type: "draft", runKey, step, text });
    }
    return true;
  }

  private tool(event: ChatEvent): boolean {
    const operationId = event.data.operationId;
    if (typeof operationId !== "string") return false;
    const ok = event.data.ok !== false;
    const entry: Entry = {
      key: `tool:${operationId}`,
      version: 0,
      type: "tool",
      operationId,
      toolName: String(event.data.toolName ?? "tool"),
      status: event.type === "tool.called" ? "called" : ok ? "ok" : "failed",
      code: typeof event.data.code === "string" ? event.data.code : null,
    };
    if (!this.mergeTool(entry, this.entries)) this.entries.push(entry);
    return true;
  }

  /** One line per tool call, advanced from called to its result whichever source (message or event) comes first. */
  private mergeTool(entry: Entry, into: Entry[]): boolean {
    if (entry.type !== "tool") return false;
    const existing = into.find((candidate) => candidate.key === entry.key);
    if (!existing || existing.type !== "tool") return false;
    if (entry.status !== "called" && existing.status === "called") {
      existing.status = entry.status;
      existing.code = entry.code ?? existing.code;
      existing.version++;
    }
    return true;
  }

  private endRun(runKey: string, failed: boolean): boolean {
    this.endedRuns.add(runKey);
    const wasPending = this.pendingRuns.delete(runKey);
    // Drafts whose reply never arrived (a failed run) do not linger as if the agent said them.
    let changed = wasPending;
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const entry = this.entries[i]!;
      if (entry.type === "draft" && entry.runKey === runKey) {
        this.entries.splice(i, 1);
        changed = true;
      }
    }
    if (failed && this.ownRuns.has(runKey)) {
      this.error("The agent could not finish this reply.");
      changed = true;
    }
    return changed;
  }

  private openDraft(runKey: string): Entry | undefined {
    return this.entries.find((entry) => entry.type === "draft" && entry.runKey === runKey);
  }

  private find(key: string): Entry | undefined {
    return this.entries.find((entry) => entry.key === key);
  }
}
