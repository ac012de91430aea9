/**
 * The widget's side of the API, with a widget JWT only: history, the agent's event stream (resumed
 * with Last-Event-ID after any drop, never yielding a seq twice), sending turns and resolving
 * decisions. No DOM here; the element owns rendering.
 */
import { VigilApiError } from "../client/client";
import { ResumableSse } from "../client/sse";
import type { DecisionResolution } from "./decision-view";
import type { ChatEvent, ChatMessage } from "./transcript";

export type LinkState = "connecting" | "live" | "reconnecting" | "failed";

export interface ConnectionHandlers {
  history(messages: ChatMessage[], nextCursor: string | null): void;
  event(event: ChatEvent): void;
  /** Pending decisions, and recently answered ones (so a card answered elsewhere says what was decided). */
  decisions(pending: Array<Record<string, unknown>>, answered: Array<Record<string, unknown>>): void;
  state(state: LinkState, detail?: string): void;
  /** The stream's resume point was pruned by retention (410 `cursor_expired`): events were missed, reload the conversation. */
  gap(): void;
}

export interface ConnectionOptions {
  endpoint: string;
  agentId: string;
  token: string;
  sessionId: string;
}

const HISTORY_PAGE = 50;

export class ChatConnection {
  private token: string;
  private stream: ResumableSse | null = null;
  private closed = false;
  private lastSeq: string | undefined;

  constructor(
    private readonly options: ConnectionOptions,
    private readonly on: ConnectionHandlers,
  ) {
    this.token = options.token;
  }

  /** A fresh token (e.g. the host page renewed an expiring one); used from the next request on. */
  setToken(token: string): void {
    this.token = token;
  }

  /** Loads the newest history page, then follows the event log from exactly where that page stands. */
  async start(): Promise<void> {
    this.on.state("connecting");
    const response = await this.request("GET", `/v1/agents/${seg(this.options.agentId)}/messages?limit=${HISTORY_PAGE}&sessionId=${encodeURIComponent(this.options.sessionId)}`);
    if (!response.ok) throw await VigilApiError.from(response);
    const page = (await response.json()) as { data: ChatMessage[]; nextCursor: string | null };
    const head = response.headers.get("x-vigil-event-seq");
    this.lastSeq = head && /^\d+$/.test(head) ? head : "0";
    this.on.history(page.data, page.nextCursor);
    await this.refreshDecisions();
    void this.follow();
  }

  /** An older history page (the cursor from the previous one). */
  async older(cursor: string): Promise<void> {
    const page = await this.json<{ data: ChatMessage[]; nextCursor: string | null }>(
      "GET",
      `/v1/agents/${seg(this.options.agentId)}/messages?limit=${HISTORY_PAGE}&sessionId=${encodeURIComponent(this.options.sessionId)}&cursor=${encodeURIComponent(cursor)}`,
    );
    this.on.history(page.data, page.nextCursor);
  }

  /**
   * Sends a turn; the reply streams over the event stream already open. The Idempotency-Key makes a
   * retried POST (after a network error) the same turn, never a second one.
   */
  async send(text: string, idempotencyKey: string): Promise<string> {
    const path = `/v1/agents/${seg(this.options.agentId)}/messages`;
    for (let attempt = 0; ; attempt++) {
      try {
        const { runKey } = await this.json<{ runKey: string }>("POST", path, { text, sessionId: this.options.sessionId }, idempotencyKey);
        return runKey;
      } catch (error) {
        if (error instanceof VigilApiError || attempt >= 4) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
      }
    }
  }

  async resolve(decisionId: string, resolution: DecisionResolution): Promise<Record<string, unknown>> {
    return this.json("POST", `/v1/decisions/${seg(decisionId)}/resolve`, resolution);
  }

  /** Pending and recently resolved decisions of this agent (the list is already narrowed to the token's own). */
  async refreshDecisions(): Promise<void> {
    const agent = encodeURIComponent(this.options.agentId);
    type Listed = { data: Array<Record<string, unknown>> };
    const [pending, answered] = await Promise.all([
      this.json<Listed>("GET", `/v1/decisions?status=pending&limit=50&agentId=${agent}`),
      this.json<Listed>("GET", `/v1/decisions?status=resolved&limit=50&agentId=${agent}`),
    ]);
    const mine = (decision: Record<string, unknown>) => decision.agentId === this.options.agentId;
    this.on.decisions(pending.data.filter(mine), answered.data.filter(mine));
  }

  close(): void {
    this.closed = true;
    this.stream?.close();
  }

  private async follow(): Promise<void> {
    const agentPath = `/v1/agents/${seg(this.options.agentId)}/events`;
    this.stream = new ResumableSse({
      lastEventId: this.lastSeq,
      // A chat stays open for hours: keep retrying (capped backoff) instead of giving up.
      reconnect: { initialDelayMs: 250, maxDelayMs: 5_000, maxAttempts: Number.MAX_SAFE_INTEGER },
      // The events since our resume point are gone; the messages are history and stay: reload from them.
      onCursorExpired: () => this.on.gap(),
      toError: (response) => VigilApiError.from(response),
      connect: async ({ lastEventId, attempt, signal }) => {
        if (attempt > 0) this.on.state("reconnecting");
        const headers: Record<string, string> = { accept: "text/event-stream" };
        if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
        const response = await this.request("GET", agentPath, undefined, { headers, signal });
        if (response.ok) {
          this.on.state("live");
          // Decisions answered while the link was down never reach this stream: ask for the current ones.
          if (attempt > 0) void this.refreshDecisions().catch(() => undefined);
        }
        return response;
      },
    });
    try {
      for await (const frame of this.stream) {
        this.on.event(toChatEvent(frame.id, frame.event, frame.data));
      }
      if (!this.closed) this.on.state("failed", "the event stream ended");
    } catch (error) {
      if (!this.closed) this.on.state("failed", error instanceof Error ? error.message : String(error));
    }
  }

  /** One request with the widget token (never an API key); JSON bodies. */
  private request(method: string, path: string, body?: unknown, options: { headers?: Record<string, string>; signal?: AbortSignal; idempotencyKey?: string } = {}): Promise<Response> {
    const headers: Record<string, string> = { accept: "application/json", ...options.headers, authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
    return fetch(`${this.options.endpoint}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}), ...(options.signal ? { signal: options.signal } : {}) });
  }

  private async json<T>(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
    const response = await this.request(method, path, body, idempotencyKey ? { idempotencyKey } : {});
    if (!response.ok) throw await VigilApiError.from(response);
    return (await response.json()) as T;
  }
}

export function toChatEvent(id: string | undefined, event: string, data: string): ChatEvent {
  let payload: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(data) as unknown;
    if (parsed && typeof parsed === "object") payload = parsed as Record<string, unknown>;
  } catch {
    // not JSON: an event without data
  }
  return {
    seq: id !== undefined && /^\d+$/.test(id) ? Number(id) : null,
    type: typeof payload.type === "string" ? payload.type : event,
    runKey: typeof payload.runKey === "string" ? payload.runKey : null,
    data: payload.data && typeof payload.data === "object" ? (payload.data as Record<string, unknown>) : {},
  };
}

/** The `sub` claim of a widget JWT (read, not verified: the server verifies), or null when it cannot be read. */
export function subjectOfToken(token: string): string | null {
  const payload = token.split(".")[1];
  if (!payload) return null;
  try {
    const binary = atob(payload.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(payload.length / 4) * 4, "="));
    const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)))) as { sub?: unknown };
    return typeof claims.sub === "string" ? claims.sub : null;
  } catch {
    return null;
  }
}

function seg(value: string): string {
  return encodeURIComponent(value);
}
