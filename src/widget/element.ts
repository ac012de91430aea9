/**
 * `<vigil-chat agent="ag_…" token="<widget JWT>" endpoint="https://…" session="default" heading="…">`
 * (`session` names one of the token's own conversations: the sessionId sent is derived from the token's `sub`.)
 *
 * History, streamed replies, tool activity and decision buttons over a widget JWT. Text is only
 * ever set with textContent (agent output is untrusted). Host pages theme it with the `--vigil-*`
 * custom properties and `::part(chat|header|log|composer)`; it emits `vigil-chat-error`
 * (detail: {code, message}) so a host can renew an expired token by setting `token` again.
 */
import { VigilApiError } from "../client/client";
import { widgetSessionId } from "../core/runtime/widget-session";
import { ChatConnection, subjectOfToken, type LinkState } from "./connection";
import { decisionCard, el } from "./decision-card";
import type { DecisionAction, DecisionView } from "./decision-view";
import { WIDGET_CSS } from "./styles";
import { Transcript, type Entry } from "./transcript";

const STATE_TEXT: Record<LinkState, string> = { connecting: "Connecting…", live: "Connected", reconnecting: "Reconnecting…", failed: "Disconnected" };

let instances = 0;

export class VigilChatElement extends HTMLElement {
  static get observedAttributes(): string[] {
    return ["agent", "token", "endpoint", "session", "heading"];
  }

  private readonly root: ShadowRoot;
  private readonly uid = `vigil-chat-${++instances}`;
  private readonly logEl: HTMLElement;
  private readonly statusEl: HTMLElement;
  private readonly titleEl: HTMLElement;
  private readonly typingEl: HTMLElement;
  private readonly olderButton: HTMLButtonElement;
  private readonly input: HTMLTextAreaElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly rendered = new Map<string, { el: HTMLElement; version: number }>();
  private transcript: Transcript | null = null;
  private connection: ChatConnection | null = null;
  private olderCursor: string | null = null;
  private renderQueued = false;
  private connectQueued = false;
  private turn = 0;

  constructor() {
    super();
    this.root = this.attachShadow({ mode: "open" });
    const style = document.createElement("style");
    style.textContent = WIDGET_CSS;
    const chat = el("section", { class: "chat", part: "chat" });
    const header = el("header", { part: "header" });
    this.titleEl = el("span", { class: "title", id: `${this.uid}-title` });
    this.statusEl = el("span", { class: "status", role: "status" });
    header.append(this.titleEl, this.statusEl);
    chat.setAttribute("aria-labelledby", this.titleEl.id);
    this.olderButton = el("button", { class: "older", type: "button", hidden: "" });
    this.olderButton.textContent = "Show earlier messages";
    this.olderButton.addEventListener("click", () => void this.loadOlder());
    // role=log is a polite live region: screen readers announce finished messages, not every token (drafts are aria-busy).
    this.logEl = el("div", { class: "log", part: "log", role: "log", "aria-live": "polite", "aria-relevant": "additions", "aria-label": "Conversation", tabindex: "0" });
    this.typingEl = el("div", { class: "typing", "aria-hidden": "true" });
    const form = el("form", { class: "composer", part: "composer" });
    const label = el("label", { class: "sr-only", for: `${this.uid}-input` });
    label.textContent = "Message";
    this.input = el("textarea", { id: `${this.uid}-input`, rows: "1", placeholder: "Write a message…", "aria-describedby": `${this.uid}-hint` });
    const hint = el("span", { class: "sr-only", id: `${this.uid}-hint` });
    hint.textContent = "Enter sends, Shift+Enter starts a new line.";
    this.sendButton = el("button", { type: "submit" });
    this.sendButton.textContent = "Send";
    form.append(label, this.input, hint, this.sendButton);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.sendCurrent();
    });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        void this.sendCurrent();
      }
    });
    chat.append(header, this.olderButton, this.logEl, this.typingEl, form);
    this.root.append(style, chat);
    this.updateHeading();
    this.setLink("connecting");
  }

  connectedCallback(): void {
    this.scheduleConnect();
  }

  disconnectedCallback(): void {
    this.connection?.close();
    this.connection = null;
  }

  attributeChangedCallback(name: string, previous: string | null, next: string | null): void {
    if (previous === next) return;
    if (name === "heading") return this.updateHeading();
    // A renewed token keeps the conversation and the stream; the next request (or reconnect) uses it.
    if (name === "token" && this.connection && next) return this.connection.setToken(next);
    if (this.isConnected) this.scheduleConnect();
  }

  private scheduleConnect(): void {
    if (this.connectQueued) return;
    this.connectQueued = true;
    queueMicrotask(() => {
      this.connectQueued = false;
      void this.connect();
    });
  }

  private async connect(): Promise<void> {
    this.connection?.close();
    this.connection = null;
    const agent = this.getAttribute("agent");
    const token = this.getAttribute("token");
    if (!agent || !token) return this.setLink("failed", "set the agent and token attributes");
    const endpoint = (this.getAttribute("endpoint") || location.origin).replace(/\/+$/, "");
    // The server confines a widget token to sessions derived from its `sub` (docs/decisions.md "Widget session
    // isolation"); the widget computes the same id so its transcript keeps to that thread.
    const subject = subjectOfToken(token);
    const requested = this.getAttribute("session") || "default";
    const session = subject === null ? requested : widgetSessionId(subject, requested);
    const transcript = new Transcript(`${agent}:session:${session}`);
    this.transcript = transcript;
    this.rendered.clear();
    this.logEl.textContent = "";
    const connection = new ChatConnection(
      { endpoint, agentId: agent, token, sessionId: session },
      {
        history: (messages, nextCursor) => {
          transcript.addHistory(messages);
          this.olderCursor = nextCursor;
          this.olderButton.hidden = nextCursor === null;
          this.render(true);
        },
        event: (event) => {
          if (transcript.apply(event)) this.render();
          if (event.type === "decision.requested") void connection.refreshDecisions().catch(() => undefined);
        },
        decisions: (pending, answered) => {
          let changed = false;
          for (const decision of answered) changed = transcript.settleDecision(decision) || changed;
          changed = transcript.reconcilePending(new Set(pending.map((decision) => String(decision.id)))) || changed;
          for (const decision of pending) changed = transcript.upsertDecision(decision) || changed;
          if (changed) this.render();
        },
        state: (state, detail) => {
          this.setLink(state, detail);
          if (state === "failed" && detail) this.report("stream_failed", detail);
        },
        gap: () => {
          if (this.connection === connection) this.scheduleConnect();
        },
      },
    );
    this.connection = connection;
    try {
      await connection.start();
    } catch (error) {
      if (this.connection !== connection) return;
      this.setLink("failed", messageOf(error));
      this.report(error instanceof VigilApiError ? error.code : "network_error", messageOf(error));
    }
  }

  private async sendCurrent(): Promise<void> {
    const text = this.input.value.trim();
    const connection = this.connection;
    const transcript = this.transcript;
    if (!text || !connection || !transcript) return;
    this.input.value = "";
    this.sendButton.disabled = true;
    try {
      const runKey = await connection.send(text, `widget-${Date.now().toString(36)}-${++this.turn}-${Math.random().toString(36).slice(2, 10)}`);
      transcript.ownRun(runKey);
    } catch (error) {
      // Nothing was sent: give the text back so it is not lost.
      if (!this.input.value) this.input.value = text;
      transcript.error(`Not sent: ${messageOf(error)}`);
      this.report(error instanceof VigilApiError ? error.code : "network_error", messageOf(error));
    } finally {
      this.sendButton.disabled = false;
      this.render();
    }
  }

  private async resolve(view: DecisionView, action: DecisionAction | null, answerText?: string): Promise<void> {
    const connection = this.connection;
    const transcript = this.transcript;
    if (!connection || !transcript) return;
    const resolution = action ? action.resolution : { resolutionType: "choose_option" as const, answerText: answerText ?? "" };
    const entry = this.rendered.get(`decision:${view.id}`);
    entry?.el.querySelectorAll("button, input").forEach((control) => ((control as HTMLButtonElement).disabled = true));
    try {
      await connection.resolve(view.id, resolution);
      transcript.closeDecision(view.id, "resolved", action ? action.label : answerText);
    } catch (error) {
      if (error instanceof VigilApiError && (error.code === "decision_not_pending" || error.status === 404)) {
        transcript.closeDecision(view.id, "closed");
      } else {
        entry?.el.querySelectorAll("button, input").forEach((control) => ((control as HTMLButtonElement).disabled = false));
        transcript.error(`Could not answer: ${messageOf(error)}`);
      }
    }
    this.render();
  }

  private async loadOlder(): Promise<void> {
    if (!this.olderCursor || !this.connection) return;
    this.olderButton.disabled = true;
    try {
      await this.connection.older(this.olderCursor);
    } catch (error) {
      this.transcript?.error(`Could not load earlier messages: ${messageOf(error)}`);
      this.render();
    } finally {
      this.olderButton.disabled = false;
    }
  }

  /** Batches the updates of one task (a burst of events) into one DOM pass; each network chunk still renders on its own. */
  private render(scrollToEnd = false): void {
    if (this.renderQueued) return;
    this.renderQueued = true;
    queueMicrotask(() => {
      this.renderQueued = false;
      const transcript = this.transcript;
      if (!transcript) return;
      const log = this.logEl;
      const stick = scrollToEnd || log.scrollHeight - log.scrollTop - log.clientHeight < 48;
      const keep = new Set<string>();
      transcript.entries.forEach((entry, index) => {
        keep.add(entry.key);
        let slot = this.rendered.get(entry.key);
        if (slot && entry.type === "draft" && slot.el.dataset.type === "draft") {
          // A streaming reply grows in place (one text change per delta, no node churn for the live region).
          if (slot.version !== entry.version) slot.el.textContent = entry.text;
          slot.version = entry.version;
        } else if (!slot || slot.version !== entry.version || slot.el.dataset.type !== entry.type) {
          const fresh = this.elementFor(entry);
          if (slot) slot.el.replaceWith(fresh);
          slot = { el: fresh, version: entry.version };
          this.rendered.set(entry.key, slot);
        }
        if (log.children[index] !== slot.el) log.insertBefore(slot.el, log.children[index] ?? null);
      });
      for (const [key, slot] of this.rendered) {
        if (!keep.has(key)) {
          slot.el.remove();
          this.rendered.delete(key);
        }
      }
      this.typingEl.textContent = transcript.pendingRuns.size > 0 && !transcript.entries.some((entry) => entry.type === "draft") ? "The agent is replying…" : "";
      if (stick) log.scrollTop = log.scrollHeight;
    });
  }

  private elementFor(entry: Entry): HTMLElement {
    switch (entry.type) {
      case "message": {
        const node = el("div", { class: entry.role === "note" ? "note" : `msg ${entry.role}`, "data-type": "message", "data-role": entry.role });
        const who = el("span", { class: "sr-only" });
        who.textContent = entry.role === "user" ? "You: " : entry.role === "assistant" ? "Agent: " : "";
        node.append(who, document.createTextNode(entry.text));
        return node;
      }
      case "draft": {
        const node = el("div", { class: "msg draft", "data-type": "draft", "aria-busy": "true" });
        node.textContent = entry.text;
        return node;
      }
      case "tool": {
        const node = el("div", { class: "tool", "data-type": "tool", "data-status": entry.status });
        const verb = entry.status === "called" ? "Using" : entry.status === "ok" ? "Used" : "Failed:";
        node.textContent = `${verb} ${entry.toolName}${entry.code ? ` (${entry.code})` : ""}`;
        return node;
      }
      case "decision":
        return decisionCard(entry.decision, `${this.uid}-d-${entry.decision.id}`, (view, action, text) => void this.resolve(view, action, text));
      case "error": {
        const node = el("div", { class: "error", "data-type": "error", role: "alert" });
        node.textContent = entry.text;
        return node;
      }
    }
  }

  private setLink(state: LinkState, detail?: string): void {
    this.statusEl.dataset.state = state;
    this.statusEl.textContent = state === "failed" && detail ? `${STATE_TEXT[state]}: ${detail}` : STATE_TEXT[state];
    this.input.disabled = state === "failed";
    this.sendButton.disabled = state === "failed";
  }

  private updateHeading(): void {
    this.titleEl.textContent = this.getAttribute("heading") || "Chat";
  }

  private report(code: string, message: string): void {
    this.dispatchEvent(new CustomEvent("vigil-chat-error", { detail: { code, message }, bubbles: true, composed: true }));
  }
}

function messageOf(error: unknown): string {
  if (error instanceof VigilApiError) return error.detail || error.code;
  return error instanceof Error ? error.message : String(error);
}
