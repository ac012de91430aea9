/**
 * Follows an event stream for a view: each event may ask for a refresh, coalesced so a burst (or the
 * replay after a reconnect with Last-Event-ID) reloads once. The stream closes with the view's signal.
 */
import { h } from "./dom";
import { problemText } from "./status";

/** A burst of events (a run's steps, a replay) within this window causes one refresh. */
const COALESCE_MS = 1_000;

export interface LiveOptions<T> {
  signal: AbortSignal;
  stream: AsyncIterable<T> & { close(): void };
  /** Whether this event changes what the view shows. */
  relevant(event: T): boolean;
  refresh(): Promise<void> | void;
  indicator: HTMLElement;
  onEvent?(event: T): void;
}

export function follow<T>(options: LiveOptions<T>): void {
  const { signal, stream, indicator } = options;
  signal.addEventListener("abort", () => stream.close(), { once: true });
  let queued = false;
  const schedule = () => {
    if (queued) return;
    queued = true;
    setTimeout(() => {
      queued = false;
      if (!signal.aborted) void options.refresh();
    }, COALESCE_MS);
  };
  indicator.textContent = "Live: following the event stream";
  indicator.dataset.state = "live";
  void (async () => {
    try {
      for await (const event of stream) {
        if (signal.aborted) return;
        options.onEvent?.(event);
        if (options.relevant(event)) schedule();
      }
      if (!signal.aborted) stopped(indicator, "the stream ended. Reload the page to follow again.");
    } catch (error) {
      if (!signal.aborted) stopped(indicator, `${problemText(error)} Reload the page to follow again.`);
    }
  })();
}

function stopped(indicator: HTMLElement, why: string): void {
  indicator.dataset.state = "stopped";
  indicator.textContent = `Live updates stopped: ${why}`;
}

export function liveIndicator(): HTMLElement {
  return h("p", { class: "live", role: "status", "data-state": "connecting" }, "Connecting to the event stream…");
}
